import { describe, expect, it } from 'vitest';
import { normaliseWaId } from '../adapters/http-contact-provider.ts';
import { createTtlCache, mergeContacts } from './contact-merge.ts';

describe('mergeContacts', () => {
  it('keeps one contact per wa_id, the first provider’s, and fills in customers only the network knows', () => {
    const merged = mergeContacts(
      [
        { provider: 'CRM', contacts: [{ wa_id: '4915550001', name: 'Ana Lima', extra: { tier: 'gold' } }] },
        {
          provider: 'Address book',
          contacts: [
            { wa_id: '4915550001', name: 'Ana', extra: null },
            { wa_id: '4915550002', name: 'bruno', extra: null },
          ],
        },
      ],
      [
        { wa_id: '4915550001', profile_name: 'Ana L.' },
        { wa_id: '4915550003', profile_name: 'Carla' },
      ],
    );
    expect(merged).toEqual([
      { wa_id: '4915550001', name: 'Ana Lima', extra: { tier: 'gold' }, provider: 'CRM' },
      { wa_id: '4915550002', name: 'bruno', extra: null, provider: 'Address book' },
      { wa_id: '4915550003', name: 'Carla', extra: null, provider: null },
    ]);
  });
});

describe('normaliseWaId', () => {
  it.each([
    ['+49 155 5000-1001', '4915550001001'],
    ['4915550001001', '4915550001001'],
    ['(0049) 155 5000 1001', '4915550001001'],
    ['0155 5000 1001', null],
    ['abc', null],
    ['+1 234 567 890 123 456 789 01', null],
  ])('%s → %s', (input, out) => {
    expect(normaliseWaId(input)).toBe(out);
  });
});

describe('createTtlCache', () => {
  it('answers from the cache until the entry expires, and never stores a failure', async () => {
    let now = 0;
    const cache = createTtlCache<number>(1000, 10, () => now);
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', load)).toBe(1);
    now = 999;
    expect(await cache.get('k', load)).toBe(1);
    now = 1000;
    expect(await cache.get('k', load)).toBe(2);
    await expect(cache.get('f', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('f', load)).toBe(3);
  });
});
