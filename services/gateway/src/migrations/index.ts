import type { Migration } from '@switchboard/kit';
import { m0001Identity } from './0001_identity.ts';
import { m0002AuthAttempts } from './0002_auth_attempts.ts';
import { m0003Outbox } from './0003_outbox.ts';
import { m0004PushTokens } from './0004_push_tokens.ts';

export const gatewayMigrations: readonly Migration[] = [
  m0001Identity,
  m0002AuthAttempts,
  m0003Outbox,
  m0004PushTokens,
];
