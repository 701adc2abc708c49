import { classifyFailure, MEDIA_MESSAGE_TYPES, NetworkError, ServiceError } from '@switchboard/proto';
import { z } from 'zod';

/** A customer's message that carries a file, as the network's webhook names it. */
export interface InboundMediaRef {
  readonly wamid: string;
  readonly networkMediaId: string;
  readonly mimeType: string | undefined;
  readonly fileName: string | undefined;
}

const MediaObject = z.looseObject({
  id: z.string().min(1),
  mime_type: z.string().optional(),
  filename: z.string().optional(),
});
const Message = z.looseObject({ id: z.string().min(1), type: z.string() });
// Only the path to `messages[]` is checked: the rest of a body may be anything the network sends.
const Body = z.looseObject({
  entry: z.array(
    z
      .looseObject({
        changes: z.array(
          z.looseObject({ value: z.looseObject({ messages: z.array(z.unknown()).optional() }) }).catch({
            value: {},
          }),
        ),
      })
      .catch({ changes: [] }),
  ),
});

/**
 * The files of the customer messages in a network webhook body (the Cloud API's `messages[]`
 * of `entry[].changes[].value`, each media type's object carrying the network's media `id`,
 * `mime_type` and, for documents, `filename`). Anything else in the body is ignored.
 */
export function inboundMediaOf(body: string): InboundMediaRef[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return [];
  }
  const parsed = Body.safeParse(json);
  if (!parsed.success) return [];
  const refs: InboundMediaRef[] = [];
  for (const entry of parsed.data.entry) {
    for (const change of entry.changes) {
      for (const raw of change.value.messages ?? []) {
        const message = Message.safeParse(raw);
        if (!message.success) continue;
        const type = message.data.type;
        if (!(MEDIA_MESSAGE_TYPES as readonly string[]).includes(type)) continue;
        const media = MediaObject.safeParse((raw as Record<string, unknown>)[type]);
        if (!media.success) continue;
        refs.push({
          wamid: message.data.id,
          networkMediaId: media.data.id,
          mimeType: media.data.mime_type,
          fileName: media.data.filename,
        });
      }
    }
  }
  return refs;
}

/** Delay before the next attempt at a download: quick at first (the URL is fresh), then slower. */
export function fetchRetryDelayMs(attempt: number): number {
  const schedule = [500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000];
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 60_000;
}

/** Attempts before a download the network keeps failing is given up (about 15 minutes). */
export const MAX_FETCH_ATTEMPTS = 20;

/**
 * Whether a failed fetch is the end of it (recorded as failed) rather than one to retry: the
 * network refused (a 4xx), kept failing for `MAX_FETCH_ATTEMPTS`, or sent what may not be stored
 * (too large, a type it may not be). A refused download is retried twice first: its URL may have
 * expired on the way, and the next attempt asks for a fresh one. Anything else (the network, the
 * database or chats unavailable) is retried.
 */
export function fetchRefused(err: unknown, attempt: number): boolean {
  if (err instanceof ServiceError) return err.status < 500;
  // Our own outages (database, NATS) wait as long as they last; any other failure of ours is
  // given up like the network's after MAX_FETCH_ATTEMPTS, so the Message says failed.
  if (!(err instanceof NetworkError))
    return classifyFailure(err).class !== 'transient' && attempt >= MAX_FETCH_ATTEMPTS;
  if (attempt >= MAX_FETCH_ATTEMPTS) return true;
  if (err.retryable) return false;
  return err.operation !== 'downloadMedia' || attempt >= 3;
}
