import { z } from 'zod';
import { defineConsumer, defineEvent, serviceRpcs } from './contracts.ts';
import { NetworkEventSchema, networkEvent } from './events.ts';
import { RoleSchema } from './principal.ts';
import { chatsRpc } from './requests.ts';

/** A media file id: a UUID, the capability that lets anyone holding it read the file. */
export const MediaIdSchema = z.uuid();

/** `POST media/` answer: the stored file and where to read it. */
export const MediaFileSchema = z
  .object({
    id: MediaIdSchema,
    file: z.url().describe('Absolute URL of `media/{id}/`: the raw bytes, readable without a token.'),
    mime_type: z.string(),
    size: z.number().int().nonnegative().describe('Bytes.'),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe('Hex SHA-256 of the bytes.'),
  })
  .meta({
    id: 'MediaFile',
    example: {
      id: '3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e',
      file: 'https://inbox.example.com/api/v1/media/3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e/',
      mime_type: 'image/png',
      size: 68,
      sha256: '0b2c8f5d6f1f1b0b7c4d1f1a9a1b5a0f6c0f3f2d1e4b6a7c8d9e0f1a2b3c4d5e',
    },
  });
export type MediaFile = z.infer<typeof MediaFileSchema>;

/**
 * The media of a customer's message as the Message resource shows it: `stored` with the file,
 * or `failed` with the network's error when it refused the download. A message whose media is
 * still being fetched has `media: null`.
 */
export const MessageMediaSchema = z
  .object({
    id: MediaIdSchema.nullable(),
    file: z.url().nullable(),
    mime_type: z.string().nullable(),
    size: z.number().int().nonnegative().nullable(),
    sha256: z.string().nullable(),
    status: z.enum(['stored', 'failed']),
    error: z
      .object({ code: z.number().int().nullable(), message: z.string() })
      .optional()
      .describe('Why the network did not hand the file over (only with `status: failed`).'),
  })
  .meta({ id: 'MessageMedia' });
export type MessageMedia = z.infer<typeof MessageMediaSchema>;

/**
 * Who uploads through the gateway, in the header the media service trusts only with the
 * gateway's signature (`kit`'s signed header, purpose `media-uploader`).
 */
export const MEDIA_UPLOADER_HEADER = 'x-switchboard-uploader';
export const MEDIA_UPLOADER_PURPOSE = 'media-uploader';
export const MediaUploaderSchema = z.object({
  user_id: z.number().int().positive(),
  role: RoleSchema,
  /** When the gateway signed it, POSIX milliseconds: an old header is refused. */
  at: z.number().int().nonnegative(),
  /**
   * What the file is: a client's upload (the default) or a file of an imported chat. Only the
   * gateway's signature can say `import`: the origin is never taken from the request itself.
   */
  origin: z.enum(['upload', 'import']).optional(),
});
export type MediaUploader = z.infer<typeof MediaUploaderSchema>;

const mediaRpc = serviceRpcs('media');

/**
 * Served by media: puts an inbox media file on the network (once; a network media id is reused
 * while the network keeps it) and answers the id to send it by.
 */
export const mediaNetworkUpload = mediaRpc('network_upload', {
  request: z.object({ media_id: MediaIdSchema }),
  response: z.object({ network_media_id: z.string().min(1), mime_type: z.string() }),
});

/** Served by chats: the media of a customer's message was stored (or refused by the network). */
export const setMessageMedia = chatsRpc('messages.set_media', {
  request: z.object({ wamid: z.string().min(1), media: MessageMediaSchema }),
  response: z.object({ updated: z.boolean() }),
});

/**
 * The network events of the bodies that carry customers' files (a message of a media type),
 * which chats publishes beside `events.network` once it stored the body: the same event,
 * for the media service alone. Every status and every text, which it has nothing to do with,
 * stays off its durable.
 */
export const networkMediaEvent = defineEvent('network_media', NetworkEventSchema);

/**
 * The message id (`Nats-Msg-Id`) of an event's copy on `events.network_media`: whoever publishes
 * it (chats, or the media service forwarding from the durable of earlier versions), JetStream
 * keeps one.
 */
export const networkMediaCopyId = (eventId: string) => `${eventId}.media`;

/**
 * The media service's durable on the events of bodies with customers' files: every customer
 * message with media is fetched from the network, with retries (a handler that fails is
 * redelivered; the network's URLs expire, so each attempt asks for a fresh one).
 */
export const mediaFetchConsumer = defineConsumer({
  durable: 'media-fetch',
  message: networkMediaEvent,
  ackWaitSeconds: 30,
  maxAckPending: 1_000,
  concurrency: 8,
});

/**
 * The durable the media service read before `media-fetch`: every network event. Where it
 * still exists, the media service forwards what arrives on it to `events.network_media` and
 * deletes it once every chats process publishes that copy itself (`services/media/README.md`).
 */
export const legacyMediaInboundConsumer = defineConsumer({
  durable: 'media-inbound',
  message: networkEvent,
  ackWaitSeconds: 30,
  maxAckPending: 1_000,
  concurrency: 8,
});
