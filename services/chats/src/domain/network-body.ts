import { MEDIA_MESSAGE_TYPES, WaIdSchema } from '@switchboard/proto';
import { z } from 'zod';

// Lenient on purpose: a message type the network adds tomorrow must be stored as it came,
// not make the whole webhook fail. Only what the inbox itself reads is required.
const Message = z.looseObject({
  id: z.string().min(1),
  from: z.string().min(1),
  timestamp: z.string().regex(/^\d+$/),
  type: z.string().min(1),
  referral: z.unknown().optional(),
});
const Status = z.looseObject({
  id: z.string().min(1),
  status: z.string().min(1),
  timestamp: z.string().regex(/^\d+$/),
  recipient_id: z.string().min(1),
  errors: z.array(z.unknown()).optional(),
  conversation: z.looseObject({ expiration_timestamp: z.string().regex(/^\d+$/).optional() }).optional(),
});
const Contact = z.looseObject({
  wa_id: z.string().min(1),
  profile: z.looseObject({ name: z.string() }).optional(),
});
const Body = z.looseObject({
  entry: z
    .array(
      z.looseObject({
        changes: z
          .array(
            z.looseObject({
              value: z
                .looseObject({
                  contacts: z.array(Contact).optional(),
                  messages: z.array(Message).optional(),
                  statuses: z.array(Status).optional(),
                })
                .optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});

export interface ParsedMessage {
  wamid: string;
  from: string;
  timestamp: number;
  type: string;
  fromAd: boolean;
  raw: Record<string, unknown>;
}

export interface ParsedStatus {
  wamid: string;
  status: string;
  timestamp: number;
  recipient: string;
  errors: unknown[] | undefined;
  conversationExpiresAt: number | undefined;
}

export interface ParsedBody {
  contacts: Array<{ wa_id: string; name: string }>;
  messages: ParsedMessage[];
  statuses: ParsedStatus[];
  /**
   * Contacts, messages and statuses left out because the customer they name is not a wa_id
   * (the inbox's one rule, `WaIdSchema`): no chat can be addressed by it. The body itself is
   * still kept as received and forwarded.
   */
  ignored: number;
}

const isWaId = (v: string) => WaIdSchema.safeParse(v).success;

/** What the inbox reads out of a network webhook body; `null` when it is not one at all. */
export function parseNetworkBody(raw: string): ParsedBody | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = Body.safeParse(json);
  if (!parsed.success) return null;
  const out: ParsedBody = { contacts: [], messages: [], statuses: [], ignored: 0 };
  for (const entry of parsed.data.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const v = change.value;
      if (!v) continue;
      for (const c of v.contacts ?? []) {
        if (!isWaId(c.wa_id)) out.ignored++;
        else out.contacts.push({ wa_id: c.wa_id, name: c.profile?.name ?? '' });
      }
      for (const m of v.messages ?? []) {
        if (!isWaId(m.from)) {
          out.ignored++;
          continue;
        }
        out.messages.push({
          wamid: m.id,
          from: m.from,
          timestamp: Number(m.timestamp),
          type: m.type,
          fromAd: m.referral !== undefined && m.referral !== null,
          raw: m,
        });
      }
      for (const s of v.statuses ?? []) {
        if (!isWaId(s.recipient_id)) {
          out.ignored++;
          continue;
        }
        const exp = s.conversation?.expiration_timestamp;
        out.statuses.push({
          wamid: s.id,
          status: s.status,
          timestamp: Number(s.timestamp),
          recipient: s.recipient_id,
          errors: s.errors,
          conversationExpiresAt: exp ? Number(exp) : undefined,
        });
      }
    }
  }
  return out;
}

/**
 * Whether a customer message of the body is of a type that carries a file (image, audio,
 * video, document, sticker): the media service fetches those, and gets the body's event only
 * then.
 */
export function carriesCustomerFiles(parsed: ParsedBody | null): boolean {
  return parsed?.messages.some((m) => (MEDIA_MESSAGE_TYPES as readonly string[]).includes(m.type)) ?? false;
}
