import { BaseEnvSchema, configLoader, envDuration, envPort, InstanceSecretKeySchema } from '@switchboard/kit';
import { SUPPORTED_MEDIA } from '@switchboard/proto';
import { PROVIDER_BASE_URL } from '@switchboard/proto/network';
import { z } from 'zod';
import type { MediaLimits } from './domain/media-kind.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const bytes = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const MediaConfigSchema = BaseEnvSchema.extend({
  /**
   * Loopback by default: only the gateway talks to this port (its `MEDIA_URL`). Named apart from
   * the gateway's HOST/PORT so the single-process mode reads both from one environment.
   */
  MEDIA_HOST: z.string().default('127.0.0.1'),
  MEDIA_PORT: envPort.default(8010),
  /** The inbox's public base URL (the gateway's): `file` URLs of media point under it. */
  PUBLIC_URL: z.url().default('http://127.0.0.1:8000'),
  /** The instance secret: uploads carry the gateway's signature under a key derived from it. */
  INBOX_SECRET_KEY: InstanceSecretKeySchema,
  /** The provider's Cloud API (or the sandbox), to fetch customers' media and upload ours. */
  NETWORK_BASE_URL: z.url().default(PROVIDER_BASE_URL),
  NETWORK_API_KEY: z.string().min(1),
  /** Size ceilings per kind; the network's own by default. */
  MEDIA_MAX_IMAGE_BYTES: bytes(SUPPORTED_MEDIA.image.maxBytes),
  MEDIA_MAX_AUDIO_BYTES: bytes(SUPPORTED_MEDIA.audio.maxBytes),
  MEDIA_MAX_VIDEO_BYTES: bytes(SUPPORTED_MEDIA.video.maxBytes),
  MEDIA_MAX_STICKER_BYTES: bytes(SUPPORTED_MEDIA.sticker.maxBytes),
  MEDIA_MAX_DOCUMENT_BYTES: bytes(SUPPORTED_MEDIA.document.maxBytes),
  /** How often stored bytes no file refers to (left by a crash) are looked for and removed; 0 never. */
  MEDIA_SWEEP_INTERVAL: envDuration('1h').refine(
    (ms) => ms === 0 || (ms >= MINUTE_MS && ms <= 7 * DAY_MS),
    '0, or from 1m to 7d (each sweep reads every stored description)',
  ),
  /**
   * Only bytes stored longer ago than this are swept, so uploads in progress and rows about to be
   * written are never touched; at least an hour, which also dwarfs any clock difference.
   */
  MEDIA_SWEEP_GRACE: envDuration('24h').refine((ms) => ms >= HOUR_MS, 'at least 1h'),
  /**
   * The time a whole upload may take: one that stalls or trickles is cut off and its chunks
   * removed, so none of them ages past the sweep's grace while the upload is still running.
   */
  MEDIA_UPLOAD_TIMEOUT: envDuration('30m').refine((ms) => ms > 0, 'more than 0'),
  /**
   * How long the durable of earlier versions (`media-inbound`) is still read after this process
   * began reading it, or after the last body an earlier chats stored: longer than an upgrade of
   * every chats process of the instance takes.
   */
  MEDIA_LEGACY_DURABLE_GRACE: envDuration('1h'),
}).superRefine((c, ctx) => {
  if (c.MEDIA_UPLOAD_TIMEOUT * 2 > c.MEDIA_SWEEP_GRACE) {
    ctx.addIssue({
      code: 'custom',
      path: ['MEDIA_UPLOAD_TIMEOUT'],
      message: 'at most half of MEDIA_SWEEP_GRACE, or the sweep could take a running upload for a dead one',
    });
  }
});

export type MediaConfig = z.infer<typeof MediaConfigSchema>;

export const loadConfig = configLoader(MediaConfigSchema);

/** Each kind's size ceiling, from its `MEDIA_MAX_<KIND>_BYTES`. */
export const limitsFromConfig = (c: MediaConfig): MediaLimits => ({
  image: c.MEDIA_MAX_IMAGE_BYTES,
  audio: c.MEDIA_MAX_AUDIO_BYTES,
  video: c.MEDIA_MAX_VIDEO_BYTES,
  sticker: c.MEDIA_MAX_STICKER_BYTES,
  document: c.MEDIA_MAX_DOCUMENT_BYTES,
});
