import { createHash, timingSafeEqual } from 'node:crypto';
import {
  HUB_SIGNATURE_HEADER,
  ServiceError,
  verifyHubSignature256,
  wabaWebhookReceived,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/** The network's documented ceiling for one webhook body. */
export const WABA_WEBHOOK_MAX_BYTES = 3 * 1024 * 1024;

export interface WabaWebhookOptions {
  bus: Bus;
  secret: string | undefined;
  verifyToken: string | undefined;
}

const VerifyQuery = z.object({
  'hub.mode': z.string().optional(),
  'hub.verify_token': z.string().optional(),
  'hub.challenge': z.string().optional(),
});

/**
 * A verify token as timingSafeEqual compares it. Comparing the tokens themselves needs buffers of
 * one length, and a check of the lengths first answers a guess of the right length differently
 * (timingSafeEqual throws when characters outside ASCII make the UTF-8 lengths differ): that
 * leaks the secret's length. Digests are always 32 bytes, so every wrong token is refused alike.
 */
const tokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const Accepted = z.object({ status: z.literal('accepted'), duplicate: z.boolean() });

/**
 * The network's single webhook for this number. A 200 means the body is stored in the
 * instance's inbound stream: the network retries anything else, so nothing is lost.
 * Registered with `prefix: '/api/v1'`.
 */
export const wabaWebhookRoutes: FastifyPluginAsync<WabaWebhookOptions> = async (plugin, opts) => {
  const scope = plugin.withTypeProvider<ZodTypeProvider>();
  // Keep the exact bytes: the signature covers them and fan-out deliveries repeat them.
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: WABA_WEBHOOK_MAX_BYTES },
    (_req, body, done) => done(null, body),
  );

  scope.get(
    '/waba/webhook/',
    {
      schema: {
        tags: ['network webhook'],
        summary: 'Verify handshake of the network webhook',
        description:
          'Echoes `hub.challenge` when `hub.verify_token` matches WABA_VERIFY_TOKEN; 403 otherwise.',
        querystring: VerifyQuery,
      },
    },
    async (req, reply) => {
      const q = req.query;
      const token = q['hub.verify_token'];
      const ok =
        opts.verifyToken !== undefined &&
        q['hub.mode'] === 'subscribe' &&
        token !== undefined &&
        timingSafeEqual(tokenDigest(token), tokenDigest(opts.verifyToken));
      if (!ok) throw new ServiceError('verify_token_mismatch', 'The verify token does not match.');
      return reply.type('text/plain').send(q['hub.challenge'] ?? '');
    },
  );

  scope.post(
    '/waba/webhook/',
    {
      // Every customer message and every status of every send arrives here: a line per request
      // would be most of the log, and the inbound stream, the event log and traces already
      // account for each body. Refusals and failures are still logged (at warn).
      logLevel: 'warn',
      schema: {
        tags: ['network webhook'],
        summary: 'Receive a network webhook',
        description:
          'Events from the network (messages and statuses). Answers 200 only once the body is durably stored; ' +
          '`X-Hub-Signature-256` is required when WABA_WEBHOOK_SECRET is set. A body seen before is accepted once.',
        response: { 200: Accepted },
      },
    },
    async (req) => {
      if (typeof req.body !== 'string') {
        throw new ServiceError('unsupported_media_type', 'Send the webhook as application/json.');
      }
      const raw = req.body;
      const sig = req.headers[HUB_SIGNATURE_HEADER];
      if (
        opts.secret !== undefined &&
        !verifyHubSignature256(opts.secret, raw, typeof sig === 'string' ? sig : undefined)
      ) {
        throw new ServiceError(
          'invalid_signature',
          'X-Hub-Signature-256 is missing or does not match the body.',
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new ServiceError('invalid_json', 'The body is not valid JSON.');
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new ServiceError('invalid_payload', 'The body must be a JSON object.');
      }
      let ack: Awaited<ReturnType<Bus['publish']>>;
      try {
        ack = await opts.bus.publish(
          wabaWebhookReceived,
          { received_at: Date.now(), body: raw, signature_verified: opts.secret !== undefined },
          { idempotencyKey: createHash('sha256').update(raw).digest('hex') },
        );
      } catch (err) {
        req.log.error({ err }, 'inbound stream did not acknowledge');
        throw ServiceError.unavailable('nats', 'The webhook could not be stored; retry later.', {
          cause: err,
        });
      }
      return { status: 'accepted' as const, duplicate: ack.duplicate };
    },
  );
};
