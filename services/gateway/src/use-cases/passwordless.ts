import type { Logger, Mailer } from '@switchboard/kit';
import { ServiceError } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../store/db.ts';
import type { FailureLimiter } from '../store/rate-limit.ts';
import { findMailableUser } from '../store/users.ts';
import type { Tokens } from './tokens.ts';

export interface PasswordlessDeps {
  db: Kysely<GatewayDatabase>;
  tokens: Tokens;
  mailer: Mailer;
  limiter: FailureLimiter;
  log: Logger;
  /** Front-end page that takes `?refresh_token=` and converts it. */
  loginUrl: string;
  serviceName: string;
  linkTtlSeconds: number;
  maxMailsPerAddress: number;
}

/**
 * Starts a password-less login. The caller always gets the same answer, whether or not the
 * address belongs to a user, and the mail leaves after the response, so neither the body nor
 * the timing reveals accounts.
 */
export type Passwordless = ReturnType<typeof createPasswordless>;

export function createPasswordless(deps: PasswordlessDeps) {
  async function deliver(email: string): Promise<void> {
    const key = `mail:${email.toLowerCase()}`;
    // The mail counts when it is decided, in one statement: parallel requests cannot all pass.
    try {
      await deps.limiter.reserve([{ key, max: deps.maxMailsPerAddress }]);
    } catch (err) {
      if (!(err instanceof ServiceError && err.status === 429)) throw err;
      deps.log.warn('password-less mail limit reached for an address');
      return;
    }
    const user = await findMailableUser(deps.db, email);
    if (!user) return;
    const refreshToken = await deps.tokens.issueRefreshToken(user.id, 'passwordless');
    const link = new URL(deps.loginUrl);
    link.searchParams.set('refresh_token', refreshToken);
    const minutes = Math.round(deps.linkTtlSeconds / 60);
    await deps.mailer.send({
      to: email,
      subject: `Your ${deps.serviceName} login link`,
      text: [
        `Hello ${user.username},`,
        '',
        `open this link to sign in to ${deps.serviceName}. It works once and expires in ${minutes} minutes:`,
        '',
        link.toString(),
        '',
        'If you did not ask for it, ignore this mail.',
      ].join('\n'),
    });
  }

  return {
    start(email: string): void {
      void deliver(email).catch((err: unknown) => deps.log.error({ err }, 'password-less mail failed'));
    },
  };
}
