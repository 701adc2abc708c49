import formbody from '@fastify/formbody';
import { InboxErrorSchema as ErrorOut } from '@switchboard/kit';
import { ServiceError } from '@switchboard/proto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { verifyPassword } from '../adapters/password-hash.ts';
import { IdParam } from '../domain/schemas.ts';
import { type Guards, principalOf, security } from '../http/guards.ts';
import type { GatewayDatabase } from '../store/db.ts';
import type { FailureLimiter } from '../store/rate-limit.ts';
import { findCredentials } from '../store/users.ts';
import type { Passwordless } from '../use-cases/passwordless.ts';
import type { Tokens } from '../use-cases/tokens.ts';
import type { Users } from '../use-cases/users.ts';

export interface AuthRouteDeps {
  db: Kysely<GatewayDatabase>;
  tokens: Tokens;
  users: Users;
  guards: Guards;
  limiter: FailureLimiter;
  passwordless: Passwordless;
  /** Failures allowed per window: `perUsername` per username+address pair, `perAddress` per address. */
  limits: { perUsername: number; perAddress: number };
}

const TokenOut = z.object({ token: z.string() });
const ConvertOut = z.object({
  token: z.string(),
  refresh_token: z
    .string()
    .optional()
    .describe('The replacement refresh token, when the used one was reset.'),
});
const ConvertIn = z.object({
  refresh_token: z.string().min(1),
  keep_refresh_token: z.boolean().default(false),
});

const SUCCESSOR = '/api/v1/auth/refresh_token/convert/';

/** `auth/` and `users/:id/refresh_token/`. Registered with `prefix: '/api/v1'`. */
export const authRoutes: FastifyPluginAsync<AuthRouteDeps> = async (root, deps) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { tokens, guards, limiter } = deps;

  /** The active user with these credentials, if any. */
  async function activeUserWith(username: string, password: string): Promise<{ id: number } | undefined> {
    const user = await findCredentials(deps.db, username);
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    // The configurator signs in only with the token provisioning gave the partner.
    return user && ok && user.is_active && user.role !== 'configurator' ? user : undefined;
  }

  await app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<ZodTypeProvider>();
    // `auth/token/` also takes HTML-form posts, as DRF's obtain-token view does.
    await scope.register(formbody);

    scope.post(
      '/auth/token/',
      {
        schema: {
          tags: ['auth'],
          summary: 'Get Auth Token',
          description:
            'Exchanges username and password for the user’s Auth Token. A token is created only when the user has ' +
            'none; otherwise the existing one is returned. JSON or form-encoded. Repeated failures for one username ' +
            'from one client address, or from one client address across usernames, answer 429 with Retry-After ' +
            'to that address.',
          body: z.object({ username: z.string().min(1).max(150), password: z.string().min(1).max(256) }),
          response: { 200: TokenOut, 400: ErrorOut, 429: ErrorOut },
        },
      },
      async (req) => {
        const { username, password } = req.body;
        // The tight limit is per username *and* address: keyed by username alone, anyone could
        // lock the owner out from anywhere. An address that has not failed is refused only while
        // more logins than the limit are in flight from it at once.
        const pairKey = `user:${username.toLowerCase()}|addr:${req.ip}`;
        // The slot is taken before the password is checked, so parallel guesses cannot all be
        // checked against the same count.
        const attempt = await limiter.reserve([
          { key: pairKey, max: deps.limits.perUsername },
          { key: `addr:${req.ip}`, max: deps.limits.perAddress },
        ]);
        const user = await activeUserWith(username, password).catch(async (err: unknown) => {
          // A failure on our side (database, hashing) is not a wrong password: it must not count.
          await attempt.release();
          throw err;
        });
        if (!user) {
          // The slot stays taken: it is the recorded failure.
          throw new ServiceError('invalid_credentials', 'Unable to log in with provided credentials.');
        }
        await attempt.release();
        await limiter.clear(pairKey);
        return { token: await tokens.authTokenFor(user.id) };
      },
    );
  });

  app.post(
    '/auth/logout/',
    {
      onRequest: guards.requireUser,
      schema: {
        tags: ['auth'],
        summary: 'Log out',
        description: 'Deletes the caller’s Auth Token; the next Get Auth Token creates a new one.',
        security,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await tokens.revokeAuthToken(principalOf(req).user_id);
      return reply.status(204).send(null);
    },
  );

  const convert = async (refreshToken: string, keep: boolean) =>
    tokens.convertRefreshToken(refreshToken, keep);

  app.post(
    '/auth/refresh_token/convert/',
    {
      schema: {
        tags: ['auth'],
        summary: 'convertRefreshToken',
        description:
          'Exchanges a Refresh Token for the user’s Auth Token. The refresh token is reset (a new one is returned ' +
          'as `refresh_token`, the used one stops working) unless `keep_refresh_token` is true. Password-less login ' +
          'links work once. Not available to the configurator.',
        body: ConvertIn,
        response: { 200: ConvertOut, 401: ErrorOut, 403: ErrorOut },
      },
    },
    async (req) => convert(req.body.refresh_token, req.body.keep_refresh_token),
  );

  app.post(
    '/auth/id_token/convert/',
    {
      schema: {
        tags: ['auth'],
        summary: 'convertIdToken (deprecated)',
        description: `Deprecated: behaves like ${SUCCESSOR} with \`id_token\` holding a Refresh Token, and will be removed.`,
        deprecated: true,
        body: z.object({ id_token: z.string().min(1), keep_refresh_token: z.boolean().default(false) }),
        response: { 200: ConvertOut, 401: ErrorOut, 403: ErrorOut },
      },
      onSend: async (_req, reply, payload) => {
        reply.header('deprecation', 'true');
        reply.header('link', `<${SUCCESSOR}>; rel="successor-version"`);
        return payload;
      },
    },
    async (req) => convert(req.body.id_token, req.body.keep_refresh_token),
  );

  app.post(
    '/auth/passwordless/',
    {
      schema: {
        tags: ['auth'],
        summary: 'Start a password-less login',
        description:
          'Always 202. When the address belongs to a user, a one-time login link carrying a refresh token is mailed.',
        body: z.object({ email: z.email().max(254) }),
        response: { 202: z.object({ detail: z.string() }) },
      },
    },
    async (req, reply) => {
      deps.passwordless.start(req.body.email);
      return reply
        .status(202)
        .send({ detail: 'If the address belongs to a user, a login link is on its way.' });
    },
  );

  app.post(
    '/users/:id/refresh_token/',
    {
      onRequest: guards.requireRole('admin', 'configurator'),
      schema: {
        tags: ['users'],
        summary: 'retrieveRefreshToken',
        description: 'Issues a new refresh token for that user (admins and the configurator).',
        security,
        params: IdParam,
        response: { 200: z.object({ refresh_token: z.string() }) },
      },
    },
    async (req: FastifyRequest<{ Params: z.infer<typeof IdParam> }>) => {
      const target = await deps.users.get(req.params.id);
      if (!target.is_active) throw new ServiceError('not_found', 'No active user with this id.');
      if (target.profile.role === 'configurator') {
        throw new ServiceError(
          'configurator_not_allowed',
          'The configurator user cannot sign in with a refresh token.',
        );
      }
      return { refresh_token: await tokens.issueRefreshToken(target.id, 'refresh') };
    },
  );
};
