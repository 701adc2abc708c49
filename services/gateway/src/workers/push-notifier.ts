import type { Logger } from '@switchboard/kit';
import {
  type ChatAccessSubject,
  canReadChat,
  type NetworkEvent,
  type Principal,
  pushNotifierConsumer,
} from '@switchboard/proto';
import type { Bus, ConsumerStart, Consumption } from '@switchboard/proto/bus';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Notification, PushOutcome, PushSender } from '../adapters/push.ts';
import type { PushPlatform } from '../domain/push-tokens.ts';
import type { GatewayDatabase } from '../store/db.ts';
import {
  anyLiveToken,
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

export interface PushNotifier {
  /** Follows the events when anyone has a live token, and stops when nobody has one any more. */
  start(): Promise<void>;
  /**
   * Answers once the notifier follows the events if anyone has a live token, and does not if
   * nobody does: a token registered before it answers is notified of every later message.
   */
  tokensChanged(): Promise<void>;
  stop(): Promise<void>;
}

/** How often the notifier asks whether anyone has a live token (tokens expire, users change). */
const RECHECK_MS = 30_000;
/** Pulls fail every second while the durable is missing or NATS is away: look at most this often. */
const LOST_CHECK_MS = 5_000;
/** After a failed change of course (NATS or the database away). */
const RETRY_MS = 1_000;

/**
 * Notifies, for each new customer message, every live token of every user who may read its
 * chat (`canReadChat` with the assignment the event carries). A push service answering 404/410
 * has forgotten the token: it is deleted.
 *
 * The events are followed (durable `gateway-push`) only while someone has a live token. Every
 * network event (a customer message, each status of each send) reached the gateway, was
 * parsed and acknowledged, whether or not a device could be told: measured with
 * `bench:messaging`'s inbound webhooks, that was a fifth of the whole pipeline's CPU per
 * webhook, paid by inboxes whose users never registered a device. With nobody to tell, the
 * durable is deleted (the stream keeps the events for everyone else, and a stopped durable
 * would leave a backlog to wade through later); when a token is registered, the durable is
 * created from that moment, before the registration is answered. Other gateways of the
 * instance see the change at their next check (`RECHECK_MS`), and one of them following is
 * enough.
 */
export function createPushNotifier(deps: PushNotifierDeps): PushNotifier {
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
        void tokensChanged();
      } else if (outcome === 'sent') {
        await markPushTokenUsed(db, t.id);
      }
    } catch (err) {
      log.warn({ err, token: t.id }, 'push token not updated after a push');
    }
  }

  async function handle(event: NetworkEvent): Promise<void> {
    if (!event.kinds.includes('message') || !event.chats?.length) return;
    // A backlog may follow an outage of the gateways: news older than this is not news.
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

  let following: Consumption | undefined;
  /** When a live token was first seen while nothing followed: following starts there, however late it succeeds. */
  let wantedSince: Date | undefined;
  /** Where a durable lost under this process resumes: after the last event it took, or where it began. */
  let resumeAt: ConsumerStart | undefined;
  /** This process deleted the durable and has seen no live token since: nothing to delete again. */
  let left = false;
  let lost = false;
  let lostCheckedAt = 0;
  // Until started: a token registered through an app that is not serving yet waits for start().
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  // One change of course at a time: a registration and the periodic check never race each other.
  let course: Promise<void> = Promise.resolve();

  async function follow(startAt: Date): Promise<void> {
    resumeAt = { time: startAt };
    following = await deps.bus.consume(
      pushNotifierConsumer,
      async (event, ctx) => {
        if (!resumeAt || !('seq' in resumeAt) || ctx.seq >= resumeAt.seq) resumeAt = { seq: ctx.seq + 1 };
        await handle(event);
        return undefined;
      },
      {
        startAt: { time: startAt },
        onError: (err) => log.warn({ err }, 'push notifier: an event was not handled'),
        // Another gateway found no live token and deleted the durable while this one had
        // one registered (their checks crossed): make it again from where it was. The pull
        // goes on being retried meanwhile, and finds it.
        onPullError: () => {
          if (Date.now() - lostCheckedAt < LOST_CHECK_MS) return;
          lostCheckedAt = Date.now();
          lost = true;
          void tokensChanged();
        },
      },
    );
  }

  async function unfollow(): Promise<void> {
    const was = following;
    following = undefined;
    await was?.stop();
  }

  async function steer(): Promise<void> {
    if (stopped) return;
    const wanted = await anyLiveToken(db, deps.ttlDays);
    if (stopped) return;
    if (wanted) left = false;
    if (wanted && following && lost) {
      await deps.bus.ensureConsumer(pushNotifierConsumer, { startAt: resumeFrom() });
      lost = false;
    } else if (wanted && !following) {
      wantedSince ??= new Date();
      await follow(wantedSince);
      wantedSince = undefined;
      lost = false;
    } else if (!wanted && !left) {
      await unfollow();
      // Also when this process never followed (at start): a follower that died leaves its
      // durable behind, and a later registration would resume it, backlog and all.
      await deps.bus.deleteConsumer(pushNotifierConsumer);
      left = true;
    }
  }

  /** After the last event this process took; no earlier than the oldest event still worth a push. */
  function resumeFrom(): ConsumerStart {
    const oldest = new Date(Date.now() - deps.maxAgeSeconds * 1000);
    if (resumeAt && 'seq' in resumeAt) return resumeAt;
    return { time: resumeAt && resumeAt.time > oldest ? resumeAt.time : oldest };
  }

  function tokensChanged(): Promise<void> {
    course = course.then(steer).catch((err: unknown) => {
      log.warn({ err }, 'push notifier: could not follow or leave the events; trying again in a second');
      // Not at the next check: a device registered meanwhile would wait up to half a minute.
      if (!stopped && !retry)
        retry = setTimeout(() => {
          retry = undefined;
          void tokensChanged();
        }, RETRY_MS);
    });
    return course;
  }

  return {
    async start() {
      if (!stopped) return;
      stopped = false;
      left = false;
      await tokensChanged();
      if (stopped) return;
      timer = setInterval(() => void tokensChanged(), RECHECK_MS);
      timer.unref();
    },
    tokensChanged,
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(retry);
      timer = undefined;
      retry = undefined;
      await course;
      await unfollow();
    },
  };
}
