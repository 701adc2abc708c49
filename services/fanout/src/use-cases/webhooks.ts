import type { JetStreamManager } from '@nats-io/jetstream';
import type { Logger, SecretBox } from '@switchboard/kit';
import { generateSecret, obviouslyPrivateUrl } from '@switchboard/kit';
import {
  type DeliveryAttempt,
  type fanoutRpc,
  type Principal,
  posixSeconds,
  posixSecondsOrNull,
  ServiceError,
  type TestOutcome,
  type Webhook,
  type WebhookWithSecret,
  webhookReplayStream,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { Kysely, Selectable } from 'kysely';
import type { z } from 'zod';
import type { Announcer } from '../adapters/lifecycle.ts';
import { openWebhook, sealHeaders } from '../adapters/sealing.ts';
import type { FanoutDatabase, WebhookAttemptsTable, WebhookRow } from '../db.ts';
import type { FanoutSettings } from '../domain/settings.ts';
import { deleteDurables, ensureDurables } from '../workers/durables.ts';
import type { DeliveryEngine } from '../workers/engine.ts';

type Req<K extends keyof typeof fanoutRpc> = z.output<(typeof fanoutRpc)[K]['request']>;

export interface WebhookManager {
  create(req: Req<'create'>): Promise<WebhookWithSecret>;
  list(req: Req<'list'>): Promise<{ count: number; results: Webhook[] }>;
  get(req: Req<'get'>): Promise<Webhook>;
  update(req: Req<'update'>): Promise<Webhook>;
  delete(req: Req<'delete'>): Promise<{ deleted: true }>;
  rotateSecret(req: Req<'rotateSecret'>): Promise<WebhookWithSecret>;
  test(req: Req<'test'>): Promise<TestOutcome>;
  deliveries(req: Req<'deliveries'>): Promise<{ count: number; results: DeliveryAttempt[] }>;
  replay(req: Req<'replay'>): Promise<{ replayed: number }>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** One replay request re-queues at most this many dead letters; call again for the rest. */
export const MAX_REPLAY_BATCH = 10_000;

/** Admins and the configurator manage every webhook; a user only their own. */
export function managesAll(p: Principal): boolean {
  return p.role === 'admin' || p.role === 'configurator';
}

const notFound = () => new ServiceError('not_found', 'No such webhook.');

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    owner: row.owner_user_id,
    enabled: row.enabled,
    ordered: row.ordered,
    headers: row.headers,
    disabled_reason: row.disabled_reason,
    failing_since: posixSecondsOrNull(row.failing_since),
    previous_secret_expires_at:
      row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now()
        ? posixSeconds(row.previous_secret_expires_at)
        : null,
    created_at: posixSeconds(row.created_at),
    updated_at: posixSeconds(row.updated_at),
  };
}

function toAttempt(row: Selectable<WebhookAttemptsTable>): DeliveryAttempt {
  return {
    id: row.id,
    event_id: row.event_id,
    message_id: row.message_id,
    attempt: row.attempt,
    trigger: row.trigger,
    url: row.url,
    success: row.success,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error_class: (row.error_class as DeliveryAttempt['error_class']) ?? null,
    error: row.error,
    response_excerpt: row.response_excerpt,
    next_attempt_at: posixSecondsOrNull(row.next_attempt_at),
    dead_lettered: row.dead_lettered,
    attempted_at: posixSeconds(row.attempted_at),
  };
}

/**
 * The webhook resources behind the management RPCs: authorisation, the table, the durables
 * that exist exactly as long as the webhook, and the lifecycle events.
 */
export function createWebhookManager(deps: {
  db: Kysely<FanoutDatabase>;
  bus: Bus;
  jsm: JetStreamManager;
  engine: DeliveryEngine;
  settings: FanoutSettings;
  log: Logger;
  announcer: Announcer;
  /** Seals secrets and static headers before they reach the table, opens them after. */
  box: SecretBox;
  /** Flushes the attempt log so `deliveries` shows what just happened. */
  flushAttempts: () => Promise<void>;
}): WebhookManager {
  const { db, bus, jsm, settings, log, announcer, box } = deps;

  async function find(p: Principal, id: string): Promise<WebhookRow> {
    if (!UUID.test(id)) throw notFound();
    let q = db.selectFrom('webhooks').selectAll().where('id', '=', id);
    if (!managesAll(p)) q = q.where('owner_user_id', '=', p.user_id);
    const row = await q.executeTakeFirst();
    if (!row) throw notFound();
    return openWebhook(box, row);
  }

  function checkUrl(url: string): void {
    if (!settings.allowPrivateTargets && obviouslyPrivateUrl(url)) {
      throw ServiceError.validation({
        url: ['The URL points to a private, loopback or link-local address, which webhooks cannot reach.'],
      });
    }
  }

  return {
    async create(req) {
      checkUrl(req.url);
      const secret = req.secret ?? generateSecret();
      const stored = await db
        .insertInto('webhooks')
        .values({
          owner_user_id: req.principal.user_id,
          url: req.url,
          enabled: req.enabled,
          ordered: req.ordered,
          sealed_headers: sealHeaders(box, req.headers),
          sealed_secret: box.seal(secret),
          sealed_previous_secret: null,
          previous_secret_expires_at: null,
          disabled_reason: req.enabled ? null : 'manual',
          failing_since: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const row = openWebhook(box, stored);
      // The durables exist before the answer, so every event published after it is delivered.
      try {
        await ensureDurables(jsm, bus.instance, row.id, row.ordered, settings);
      } catch (err) {
        await db.deleteFrom('webhooks').where('id', '=', row.id).execute();
        log.error({ err }, 'could not create the webhook durables');
        throw ServiceError.unavailable('nats', 'The webhook could not be set up; try again.', { cause: err });
      }
      await announcer.announce(db, row, 'created', req.principal);
      await announcer.committed();
      return { ...toWebhook(row), secret };
    },

    async list(req) {
      let q = db.selectFrom('webhooks');
      if (!managesAll(req.principal)) q = q.where('owner_user_id', '=', req.principal.user_id);
      else if (req.owner !== undefined) q = q.where('owner_user_id', '=', req.owner);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('created_at').orderBy('id').limit(req.limit).offset(req.offset).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { count: Number(total.n), results: rows.map((r) => toWebhook(openWebhook(box, r))) };
    },

    async get(req) {
      return toWebhook(await find(req.principal, req.id));
    },

    async update(req) {
      const before = await find(req.principal, req.id);
      if (req.url !== undefined) checkUrl(req.url);
      const enabling = req.enabled === true && !before.enabled;
      const disabling = req.enabled === false && before.enabled;
      const row = await db.transaction().execute(async (trx) => {
        const stored = await trx
          .updateTable('webhooks')
          .set({
            updated_at: new Date(),
            ...(req.url !== undefined ? { url: req.url } : {}),
            ...(req.ordered !== undefined ? { ordered: req.ordered } : {}),
            ...(req.headers !== undefined ? { sealed_headers: sealHeaders(box, req.headers) } : {}),
            ...(enabling ? { enabled: true, disabled_reason: null, failing_since: null } : {}),
            ...(disabling ? { enabled: false, disabled_reason: 'manual' as const } : {}),
          })
          .where('id', '=', before.id)
          .returningAll()
          .executeTakeFirst();
        if (!stored) throw notFound();
        const opened = openWebhook(box, stored);
        const action = enabling ? 'enabled' : disabling ? 'disabled' : 'updated';
        await announcer.announce(trx, opened, action, req.principal);
        return opened;
      });
      await announcer.committed();
      if (row.ordered !== before.ordered) {
        await ensureDurables(jsm, bus.instance, row.id, row.ordered, settings).catch((err: unknown) =>
          log.warn({ err, webhook: row.id }, 'durable limits not updated; the next reconcile retries'),
        );
      }
      return toWebhook(row);
    },

    async delete(req) {
      const row = await find(req.principal, req.id);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', row.id).execute();
        await trx.deleteFrom('webhooks').where('id', '=', row.id).execute();
        await announcer.announce(trx, row, 'deleted', req.principal);
      });
      await announcer.committed();
      await deleteDurables(jsm, bus.instance, row.id).catch((err: unknown) =>
        log.warn({ err, webhook: row.id }, 'durables not deleted; the next reconcile removes them'),
      );
      return { deleted: true as const };
    },

    async rotateSecret(req) {
      const before = await find(req.principal, req.id);
      const secret = generateSecret();
      const row = await db.transaction().execute(async (trx) => {
        const stored = await trx
          .updateTable('webhooks')
          .set({
            sealed_secret: box.seal(secret),
            sealed_previous_secret: box.seal(before.secret),
            previous_secret_expires_at: new Date(Date.now() + settings.rotationGraceMs),
            updated_at: new Date(),
          })
          .where('id', '=', before.id)
          .returningAll()
          .executeTakeFirst();
        if (!stored) throw notFound();
        const opened = openWebhook(box, stored);
        await announcer.announce(trx, opened, 'secret_rotated', req.principal);
        return opened;
      });
      await announcer.committed();
      return { ...toWebhook(row), secret };
    },

    async test(req) {
      const row = await find(req.principal, req.id);
      return deps.engine.test(row);
    },

    async deliveries(req) {
      const row = await find(req.principal, req.id);
      await deps.flushAttempts();
      const q = db.selectFrom('webhook_attempts').where('webhook_id', '=', row.id);
      const [rows, total] = await Promise.all([
        q.selectAll().orderBy('id', 'desc').limit(req.limit).offset(req.offset).execute(),
        q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { count: Number(total.n), results: rows.map(toAttempt) };
    },

    async replay(req) {
      const row = await find(req.principal, req.id);
      if (!row.enabled) {
        throw new ServiceError('webhook_disabled', 'Enable the webhook before replaying its events.');
      }
      const letters = await db
        .selectFrom('webhook_dead_letters')
        .selectAll()
        .where('webhook_id', '=', row.id)
        .where('dead_at', '>=', new Date(req.since_ms))
        .where('replayed_at', 'is', null)
        .orderBy('received_at')
        .orderBy('id')
        .limit(MAX_REPLAY_BATCH)
        .execute();
      const stream = webhookReplayStream(row.id);
      for (const dl of letters) {
        const replayCount = dl.replay_count + 1;
        await bus.publish(
          stream,
          {
            webhook_id: row.id,
            dead_letter_id: dl.id,
            event_id: dl.event_id,
            kinds: dl.kinds,
            wa_ids: dl.wa_ids,
            ...(dl.chats ? { chats: dl.chats } : {}),
            received_at: dl.received_at.getTime(),
            body: dl.body,
          },
          // A retried replay request does not queue the same dead letter twice.
          { idempotencyKey: `replay-${dl.id}-${replayCount}` },
        );
        await db
          .updateTable('webhook_dead_letters')
          .set({ replayed_at: new Date(), replay_count: replayCount })
          .where('id', '=', dl.id)
          .execute();
      }
      if (letters.length > 0) {
        await announcer.announce(db, row, 'replayed', req.principal);
        await announcer.committed();
      }
      return { replayed: letters.length };
    },
  };
}
