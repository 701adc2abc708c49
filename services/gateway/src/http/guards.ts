import type { Principal, Role } from '@switchboard/proto';
import { assertMayMessage, ServiceError } from '@switchboard/proto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tokens } from '../use-cases/tokens.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const TOKEN_HEADER = /^Token\s+([A-Za-z0-9_-]{20,128})\s*$/;

/** The OpenAPI `security` of a route the guards keep to signed-in users (the `token` scheme of app.ts). */
export const security = [{ token: [] }];

/** An onRequest hook: it runs before the body is read, so a 401 or 403 comes before a 400 about the body. */
export type GuardHook = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

export interface Guards {
  /** Resolves `Authorization: Token <t>` once per request; 401 when missing or wrong. */
  authenticate(req: FastifyRequest): Promise<Principal>;
  /** onRequest hook: any authenticated user. */
  requireUser: GuardHook;
  /** onRequest hook factory: only these roles (403 otherwise). */
  requireRole(...roles: Role[]): GuardHook;
  /** onRequest hook factory: the caller must pass `assert` (one of proto's `assertMay…`, which throws the 403). */
  requireAllowed(assert: (p: Principal) => void): GuardHook;
  /** onRequest hook: messaging paths (reading and sending messages and chats); the configurator gets 403. */
  requireMessagingUser: GuardHook;
}

export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new ServiceError('not_authenticated');
  return req.principal;
}

export function createGuards(tokens: Tokens): Guards {
  async function authenticate(req: FastifyRequest): Promise<Principal> {
    if (req.principal) return req.principal;
    const header = req.headers.authorization;
    if (!header) throw new ServiceError('not_authenticated', 'Authentication credentials were not provided.');
    const match = TOKEN_HEADER.exec(header);
    const principal = match?.[1] ? await tokens.principalForToken(match[1]) : null;
    if (!principal)
      throw new ServiceError('invalid_token', 'Invalid token.', {
        headers: { 'www-authenticate': 'Token' },
      });
    req.principal = principal;
    return principal;
  }

  const requireAllowed =
    (assert: (p: Principal) => void): GuardHook =>
    async (req) =>
      assert(await authenticate(req));

  return {
    authenticate,
    async requireUser(req) {
      await authenticate(req);
    },
    requireRole(...roles) {
      return requireAllowed((p) => {
        if (!roles.includes(p.role)) throw new ServiceError('permission_denied');
      });
    },
    requireAllowed,
    requireMessagingUser: requireAllowed(assertMayMessage),
  };
}
