import type { Principal } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { createPrincipalCache } from './principal-cache.ts';

const principal = (user_id: number): Principal => ({
  user_id,
  username: `u${user_id}`,
  role: 'user',
  group_ids: [],
  permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
  assigned_wa_ids: [],
});

describe('principal cache', () => {
  it('answers until the entry expires', () => {
    let t = 1_000;
    const cache = createPrincipalCache({ ttlMs: 100, now: () => t });
    cache.set('a', principal(1), cache.generation());
    expect(cache.get('a')?.user_id).toBe(1);
    t += 100;
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops the entries of the users whose rights changed, and everything for an empty list', () => {
    const cache = createPrincipalCache({ ttlMs: 60_000 });
    cache.set('a', principal(1), cache.generation());
    cache.set('b', principal(2), cache.generation());
    cache.dropUsers([1]);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.user_id).toBe(2);
    cache.dropUsers([]);
    expect(cache.get('b')).toBeUndefined();
  });

  it('does not keep a principal read before a drop (a logout racing the lookup)', () => {
    const cache = createPrincipalCache({ ttlMs: 60_000 });
    const readAt = cache.generation();
    cache.dropUsers([1]); // the logout commits while the lookup's query is in flight
    cache.set('a', principal(1), readAt);
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps nothing when the lifetime is zero', () => {
    const cache = createPrincipalCache({ ttlMs: 0 });
    cache.set('a', principal(1), cache.generation());
    expect(cache.get('a')).toBeUndefined();
  });
});
