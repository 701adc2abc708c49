import type { Migration, SecretBox } from '@switchboard/kit';
import { m0001Webhooks } from './0001_webhooks.ts';
import { m0002SealedSecrets } from './0002_sealed_secrets.ts';
import { m0003Outbox } from './0003_outbox.ts';
import { m0004DeadLetterChats } from './0004_dead_letter_chats.ts';
import { m0005FailedAttemptsByEvent } from './0005_failed_attempts_by_event.ts';

/**
 * The fan-out's migrations. The service passes its secrets box: sealing existing webhooks
 * needs the key. Without one they build the schema of an empty database only.
 */
export function createFanoutMigrations(box?: SecretBox): readonly Migration[] {
  return [
    m0001Webhooks,
    m0002SealedSecrets(box),
    m0003Outbox,
    m0004DeadLetterChats,
    m0005FailedAttemptsByEvent,
  ];
}

/** For databases without webhooks (test templates, benchmarks): refuses to run on one with webhooks. */
export const fanoutMigrations: readonly Migration[] = createFanoutMigrations();
