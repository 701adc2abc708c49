import type { Logger } from '@switchboard/kit';
import {
  type ChatAccessSubject,
  canReadChat,
  type NetworkEvent,
  type Principal,
  pushNotifierConsumer,
} from '@switchboard/proto';
import type { Bus, Consumption } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Notification, PushOutcome, PushSender } from '../adapters/push.ts';
import type { PushPlatform } from '../domain/push-tokens.ts';
import type { GatewayDatabase } from '../store/db.ts';
import {
  deletePushTokenById,
  liveTokens,
  markPushTokenUsed,
  type PushTokenRow,
} from '../store/push-tokens.ts';

// The parts of a network messages webhook a notification shows (Cloud API webhook reference:
// entry[].changes[].value.{contacts[].profile.name, messages[].{from,id,type,text.body}}).
const WebhookBody = z.object({
  entry: z.array(
    z.object({
      changes: z.array(
        z.object({
          value: z.object({
            contacts: z
              .array(z.object({ wa_id: z.string(), profile: z.object({ name: z.string() }).optional() }))
              .optional(),
            messages: z
              .array(
                z.object({
                  from: z.string(),
                  id: z.string(),
                  type: z.string(),
                  text: z.object({ body: z.string() }).optional(),
                }),
              )
              .optional(),
          }),
        }),
      ),
    }),
  ),
});

/** One notification per customer message of a network body. */
export function notificationsOf(body: string): Notification[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [];
  }
  const parsed = WebhookBody.safeParse(json);
  if (!parsed.success) return [];
  return parsed.data.entry.flatMap((e) =>
    e.changes.flatMap(({ value }) =>
      (value.messages ?? []).map((m) => {
        const name = value.contacts?.find((c) => c.wa_id === m.from)?.profile?.name || `+${m.from}`;
        const text = m.type === 'text' && m.text ? m.text.body : `(${m.type})`;
        return {
          title: name,
          body: text.length > 200 ? `${text.slice(0, 199)}…` : text,
          wa_id: m.from,
          message_id: m.id,
        };
      }),
    ),
  );
}

export interface PushNotifierDeps {
  bus: Bus;
  db: Kysely<GatewayDatabase>;
  log: Logger;
  senders: Record<PushPlatform, PushSender>;
  principalFor(userId: number): Promise<Principal | null>;
  ttlDays: number;
  maxAgeSeconds: number;
}

/**
 * Consumes the instance's network events and notifies, for each new customer message, every
 * live token of every user who may read its chat (`canReadChat` with the assignment the event
 * carries). A push service answering 404/410 has forgotten the token: it is deleted.
 */
export async function startPushNotifier(deps: PushNotifierDeps): Promise<Consumption> {
  const { db, log } = deps;
  // One read of the live tokens, and of their owners' rights, serves every event handled while
  // it runs: under a burst of customer messages the events otherwise each paid a query for the
  // tokens (a tenth of the gateway's socket-write time under `bench:messaging`) and two per
  // owner. A read never answers an event that arrived after it ended.
  interface Audience {
    tokens: PushTokenRow[];
    principals: Map<number, Principal | null>;
  }
  let reading: Promise<Audience> | undefined;
  async function readAudience(): Promise<Audience> {
    const tokens = await liveTokens(db, deps.ttlDays);
    const principals = new Map<number, Principal | null>();
    for (const userId of new Set(tokens.map((t) => t.user_id)))
      principals.set(userId, await deps.principalFor(userId));
    return { tokens, principals };
  }
  const audienceNow = () => {
    reading ??= readAudience().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  /** What follows a push: a forgotten token is deleted, a used one marked; never a reason to push again. */
  async function settle(t: PushTokenRow, outcome: PushOutcome): Promise<void> {
    try {
      if (outcome === 'gone') {
        await deletePushTokenById(db, t.id);
        log.info({ token: t.id, user: t.user_id }, 'push token deleted: the push service no longer knows it');
      } else if (outcome === 'sent') {
        await markPushTokenUsed(db, t.id);
      }
    } catch (err) {
      log.warn({ err, token: t.id }, 'push token not updated after a push');
    }
  }

  async function handle(event: NetworkEvent): Promise<void> {
    if (!event.kinds.includes('message') || !event.chats?.length) return;
    // The durable starts at the stream's beginning and a backlog may follow an outage: news
    // older than this is not news.
    if (Date.now() - event.received_at > deps.maxAgeSeconds * 1000) return;
    // Whom to tell first (one read shared by the events of a burst): with no live token,
    // the body need not be read.
    const { tokens, principals } = await audienceNow();
    if (!tokens.length) return;
    const notifications = notificationsOf(event.body);
    if (!notifications.length) return;
    const chats = new Map<string, ChatAccessSubject>(event.chats.map((c) => [c.wa_id, c]));

    const sends: Array<Promise<void>> = [];
    for (const n of notifications) {
      const chat = chats.get(n.wa_id);
      if (!chat) continue;
      for (const t of tokens) {
        const p = principals.get(t.user_id);
        if (!p || !canReadChat(p, chat)) continue;
        sends.push(deps.senders[t.platform].send(t.token, n).then((outcome) => settle(t, outcome)));
      }
    }
    await Promise.all(sends);
  }

  return deps.bus.consume(pushNotifierConsumer, async (event) => {
    await handle(event);
    return undefined;
  });
}
