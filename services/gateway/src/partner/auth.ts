import { authenticatePartner, partnerExists } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'partner_session';

export interface SessionClaims {
  partner_id: string;
}

export interface PartnerAuth {
  /** The partner of a request: `Authorization: Bearer <API key>`, else the session cookie; null when neither holds. */
  partnerOf(req: FastifyRequest): Promise<string | null>;
  /** `onRequest` hook of authenticated routes: 401 `{"detail":"Not authenticated"}` otherwise. */
  required(req: FastifyRequest, reply: FastifyReply): Promise<void>;
}

const partners = new WeakMap<FastifyRequest, string>();

export function partnerIdOf(req: FastifyRequest): string {
  const id = partners.get(req);
  if (!id) throw new Error('partnerIdOf() on a route without the authentication hook');
  return id;
}

export class NotAuthenticatedError extends Error {
  readonly statusCode = 401;
  override readonly name = 'NotAuthenticatedError';
}

export function createPartnerAuth(opts: {
  bus: Bus;
  verifySession(token: string): SessionClaims | null;
}): PartnerAuth {
  async function partnerOf(req: FastifyRequest): Promise<string | null> {
    const header = req.headers.authorization;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S{1,500})\s*$/i.exec(header);
      if (!m?.[1]) return null;
      const { partner_id } = await opts.bus.request(
        authenticatePartner,
        { api_key: m[1] },
        { timeoutMs: 10_000 },
      );
      return partner_id;
    }
    const cookie = req.cookies[SESSION_COOKIE];
    const claims = cookie ? opts.verifySession(cookie) : null;
    if (!claims) return null;
    // A session outlives nothing: a partner removed since login is logged out.
    const { exists } = await opts.bus.request(
      partnerExists,
      { partner_id: claims.partner_id },
      { timeoutMs: 10_000 },
    );
    return exists ? claims.partner_id : null;
  }
  return {
    partnerOf,
    async required(req, reply) {
      const id = await partnerOf(req);
      if (!id) {
        reply.header('www-authenticate', 'Bearer');
        throw new NotAuthenticatedError('Not authenticated');
      }
      partners.set(req, id);
    },
  };
}
