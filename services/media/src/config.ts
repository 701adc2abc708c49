import { BaseEnvSchema, configLoader, envDuration, envPort, InstanceSecretKeySchema } from '@switchboard/kit';
import { SUPPORTED_MEDIA } from '@switchboard/proto';
import { PROVIDER_BASE_URL } from '@switchboard/proto/network';
import { z } from 'zod';
import type { MediaLimits } from './domain/media-kind.ts';

const HOUR_MS = 3_600_000;
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
  MEDIA_SWEEP_INTERVAL: envDuration('1h').refine((ms) => ms <= 7 * DAY_MS, 'at most 7d'),
  /**
   * Only bytes stored longer ago than this are swept, so uploads in progress and rows about to be
   * written are never touched; at least an hour, which also dwarfs any clock difference.
   */
  MEDIA_SWEEP_GRACE: envDuration('24h').refine((ms) => ms >= HOUR_MS, 'at least 1h'),
  /**
   * A connection with no byte either way for this long is closed: a stalled upload fails (its
   * chunks removed) well within the sweep's shortest grace.
   */
  MEDIA_IDLE_CONNECTION_TIMEOUT: envDuration('15m').refine(
    (ms) => ms > 0 && ms <= 30 * 60_000,
    'between 1ms and 30m: a stalled upload must end well before the sweep grace (at least 1h)',
  ),
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
