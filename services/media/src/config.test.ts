import { describe, expect, it } from 'vitest';
import { limitsFromConfig, loadConfig } from './config.ts';

const env = {
  DATABASE_URL: 'postgres://media@db.internal:5432/inbox',
  INBOX_SECRET_KEY: 'x'.repeat(40),
  NETWORK_API_KEY: 'key',
};

describe('media configuration', () => {
  it("takes the network's size limits by default", () => {
    expect(limitsFromConfig(loadConfig(env))).toEqual({
      image: 5 * 1024 * 1024,
      audio: 16 * 1024 * 1024,
      video: 16 * 1024 * 1024,
      sticker: 500 * 1024,
      document: 100 * 1024 * 1024,
    });
  });

  it('takes each limit from the environment', () => {
    const limits = limitsFromConfig(
      loadConfig({ ...env, MEDIA_MAX_IMAGE_BYTES: '1000', MEDIA_MAX_DOCUMENT_BYTES: '2000' }),
    );
    expect([limits.image, limits.document]).toEqual([1000, 2000]);
  });

  it('sweeps orphans hourly with a day of grace by default, and takes durations as operators write them', () => {
    const defaults = loadConfig(env);
    expect([defaults.MEDIA_SWEEP_INTERVAL, defaults.MEDIA_SWEEP_GRACE]).toEqual([3_600_000, 86_400_000]);
    const set = loadConfig({ ...env, MEDIA_SWEEP_INTERVAL: '0', MEDIA_SWEEP_GRACE: '2h' });
    expect([set.MEDIA_SWEEP_INTERVAL, set.MEDIA_SWEEP_GRACE]).toEqual([0, 7_200_000]);
  });

  it.each([
    ['a sweep interval that is not a duration', { MEDIA_SWEEP_INTERVAL: 'hourly' }],
    ['a sweep interval over a week', { MEDIA_SWEEP_INTERVAL: '8d' }],
    ['a sweep grace under an hour', { MEDIA_SWEEP_GRACE: '59m' }],
    ['an upload timeout over half the sweep grace', { MEDIA_UPLOAD_TIMEOUT: '2h', MEDIA_SWEEP_GRACE: '3h' }],
    ['no upload timeout', { MEDIA_UPLOAD_TIMEOUT: '0' }],
    ['a sweep every few seconds', { MEDIA_SWEEP_INTERVAL: '5s' }],
    ['no instance secret', { INBOX_SECRET_KEY: undefined }],
    ['a short instance secret', { INBOX_SECRET_KEY: 'short' }],
    ['no network key', { NETWORK_API_KEY: undefined }],
    ['a limit of zero', { MEDIA_MAX_STICKER_BYTES: '0' }],
    ['a port out of range', { MEDIA_PORT: '70000' }],
  ])('refuses %s', (_what, change) => {
    expect(() => loadConfig({ ...env, ...change })).toThrow(/Invalid configuration/);
  });
});
