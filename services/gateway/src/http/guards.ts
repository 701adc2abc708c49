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

export interface Guards {
  /** Resolves `Authorization: Token <t>` once per request; 401 when missing or wrong. */
  authenticate(req: FastifyRequest): Promise<Principal>;
  /** onRequest hook: any authenticated user (runs before body validation, so 401/403 come first). */
  requireUser(req: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** onRequest hook factory: only these roles (403 otherwise). */
  requireRole(...roles: Role[]): (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** onRequest hook: messaging paths (reading and sending messages and chats); the configurator gets 403. */
  requireMessagingUser(req: FastifyRequest, reply: FastifyReply): Promise<void>;
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

  return {
    authenticate,
    async requireUser(req) {
      await authenticate(req);
    },
    requireRole(...roles) {
      return async (req) => {
        const p = await authenticate(req);
        if (!roles.includes(p.role)) throw new ServiceError('permission_denied');
      };
    },
    async requireMessagingUser(req) {
      assertMayMessage(await authenticate(req));
    },
  };
}
