import { describe, expect, it } from 'vitest';
import { assertRefreshUsable, type RefreshTokenState, refreshDecision, refreshTtlSeconds } from './tokens.ts';

const now = Date.parse('2026-01-01T00:00:00Z');
const usable: RefreshTokenState = {
  purpose: 'refresh',
  expires_at: new Date(now + 60_000),
  used_at: null,
  role: 'user',
  is_active: true,
};

describe('assertRefreshUsable', () => {
  it('accepts a known, unused, unexpired token of an active user', () => {
    expect(() => assertRefreshUsable(usable, now)).not.toThrow();
  });

  it.each([
    ['unknown', undefined],
    ['used', { ...usable, used_at: new Date(now - 1) }],
    ['expired', { ...usable, expires_at: new Date(now) }],
    ['of a deactivated user', { ...usable, is_active: false }],
  ])('refuses a token %s', (_, row) => {
    expect(() => assertRefreshUsable(row, now)).toThrow(
      expect.objectContaining({ code: 'invalid_refresh_token' }),
    );
  });

  it('refuses the configurator', () => {
    expect(() => assertRefreshUsable({ ...usable, role: 'configurator' }, now)).toThrow(
      expect.objectContaining({ code: 'configurator_not_allowed' }),
    );
  });
});

describe('refreshDecision', () => {
  it('rotates a refresh token unless kept', () => {
    expect(refreshDecision('refresh', false)).toEqual({ consume: true, rotate: true });
    expect(refreshDecision('refresh', true)).toEqual({ consume: false, rotate: false });
  });

  it('uses a password-less link once, whatever keep says, with no replacement', () => {
    expect(refreshDecision('passwordless', false)).toEqual({ consume: true, rotate: false });
    expect(refreshDecision('passwordless', true)).toEqual({ consume: true, rotate: false });
  });
});

describe('refreshTtlSeconds', () => {
  it('takes the lifetime of the purpose', () => {
    const ttl = { refreshTtlSeconds: 100, passwordlessTtlSeconds: 5 };
    expect(refreshTtlSeconds('refresh', ttl)).toBe(100);
    expect(refreshTtlSeconds('passwordless', ttl)).toBe(5);
  });
});
