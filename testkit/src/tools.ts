/**
 * `@switchboard/testkit/tools`: test helpers that need no vitest run, for tests, benchmarks and
 * scripts alike.
 */
import { randomBytes } from 'node:crypto';

export { admin, principal } from './fixtures.ts';
export { freePort, waitFor } from './infra/ports.ts';
export * from './otlp-receiver.ts';
export * from './processes.ts';
export * from './receiver.ts';

/** An instance id no other test uses, so parallel tests on one NATS server never meet. */
export function uniqueInstanceId(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}
