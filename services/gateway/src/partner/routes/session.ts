import { authenticatePartner } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type PartnerAuth, partnerIdOf, SESSION_COOKIE } from '../auth.ts';
import { HTTPErrorSchema, HTTPValidationErrorSchema } from '../errors.ts';

const PartnerId = z
  .object({ partner_id: z.string() })
  .meta({ id: 'PartnerId', example: { partner_id: 'pa-7c1e9b20a4d3' } });
const Session = z
  .object({ authenticated: z.boolean(), partner_id: z.string().nullable() })
  .meta({ id: 'Session', example: { authenticated: true, partner_id: 'pa-7c1e9b20a4d3' } });
const Login = z
  .object({ api_key: z.string().min(1).max(500) })
  .meta({ id: 'LoginRequest', example: { api_key: 'sbp_…' } });

export interface SessionRouteOptions {
  bus: Bus;
  auth: PartnerAuth;
  signSession(partnerId: string): string;
  ttlSeconds: number;
  secureCookie: boolean;
}

/** `GET /v1/partner` and the session: login, logout, check. */
export const partnerSessionRoutes: FastifyPluginAsync<SessionRouteOptions> = async (plugin, opts) => {
  const app = plugin.withTypeProvider<ZodTypeProvider>();
  const cookie = { path: '/', httpOnly: true, sameSite: 'strict', secure: opts.secureCookie } as const;

  app.get(
    '/partner',
    {
      onRequest: opts.auth.required,
      schema: {
        tags: ['partner'],
        security: [{ HTTPBearer: [] }],
        summary: 'Get Partner Id',
        response: { 200: PartnerId, 401: HTTPErrorSchema },
      },
    },
    async (req) => ({ partner_id: partnerIdOf(req) }),
  );

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Login',
        description:
          'Exchanges the API key for a session cookie (`partner_session`: httpOnly, SameSite=Strict, a signed JWT with only the partner id and an expiry; never the key). For a partner’s own front end.',
        body: Login,
        response: { 200: PartnerId, 401: HTTPErrorSchema, 422: HTTPValidationErrorSchema },
      },
    },
    async (req, reply) => {
      const { partner_id } = await opts.bus.request(authenticatePartner, { api_key: req.body.api_key });
      if (!partner_id) return reply.status(401).send({ detail: 'Invalid API key' });
      reply.setCookie(SESSION_COOKIE, opts.signSession(partner_id), { ...cookie, maxAge: opts.ttlSeconds });
      return { partner_id };
    },
  );

  app.post(
    '/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Logout',
        description: 'Clears the session cookie.',
        response: { 200: Session },
      },
    },
    async (_req, reply) => {
      reply.clearCookie(SESSION_COOKIE, cookie);
      return { authenticated: false, partner_id: null };
    },
  );

  app.get(
    '/auth/session',
    {
      schema: {
        tags: ['auth'],
        summary: 'Check Session',
        description:
          'Whether the request carries a valid session (or API key): for a front end deciding to show a login.',
        response: { 200: Session },
      },
    },
    async (req) => {
      const partner_id = await opts.auth.partnerOf(req);
      return { authenticated: partner_id !== null, partner_id };
    },
  );
};
