import { messagesWebhookBody } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { initials } from './initials.ts';
import { createKeyedQueue } from './keyed-queue.ts';
import { carriesCustomerFiles, parseNetworkBody } from './network-body.ts';
import { containsPattern } from './search.ts';
import { foldStatuses, type StatusRow } from './statuses.ts';
import { businessWindowEnd, customerWindowEnd, windowExpiresAt } from './window.ts';

const row = (status: string, timestamp: number, errors: unknown = null): StatusRow => ({
  status,
  timestamp,
  errors,
});

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [item, ...p]),
  );
}

describe('foldStatuses', () => {
  it('gives the same result for every arrival order, duplicates included', () => {
    const rows = [row('sent', 10), row('delivered', 20), row('read', 30), row('read', 30)];
    for (const order of permutations(rows)) {
      expect(foldStatuses(order)).toEqual({ sent: 10, delivered: 20, read: 30 });
    }
  });

  it('lets a later stage imply the earlier ones', () => {
    expect(foldStatuses([row('read', 30)])).toEqual({ sent: 30, delivered: 30, read: 30 });
    expect(foldStatuses([row('delivered', 20)])).toEqual({ sent: 20, delivered: 20 });
    expect(foldStatuses([row('read', 30), row('sent', 10)])).toEqual({ sent: 10, delivered: 30, read: 30 });
  });

  it('keeps a failure with the network errors', () => {
    const errors = [{ code: 131026, title: 'Message undeliverable' }];
    expect(foldStatuses([row('sent', 10), row('failed', 12, errors)])).toEqual({
      sent: 10,
      failed: { timestamp: 12, errors },
    });
    expect(foldStatuses([row('failed', 12, 'not a list')]).failed?.errors).toEqual([]);
  });

  it('is empty before any status', () => {
    expect(foldStatuses([])).toEqual({});
  });
});

describe('care window', () => {
  it('is 24 h after a customer message, 72 h after one from an ad', () => {
    expect(customerWindowEnd(1_000, false)).toBe(1_000 + 24 * 3600);
    expect(customerWindowEnd(1_000, true)).toBe(1_000 + 72 * 3600);
    expect(businessWindowEnd(5)).toBe(5 + 24 * 3600);
  });

  it('is the latest of the customer, network and template windows, or none', () => {
    const none = {
      customer_window_expires_at: null,
      network_window_expires_at: null,
      business_window_expires_at: null,
    };
    expect(windowExpiresAt(none)).toBeNull();
    expect(
      windowExpiresAt({ ...none, customer_window_expires_at: 100, network_window_expires_at: 300 }),
    ).toBe(300);
    expect(windowExpiresAt({ ...none, business_window_expires_at: 50 })).toBe(50);
  });
});

describe('initials', () => {
  it('takes the first letters of the first and last word, or the number', () => {
    expect(initials('Erika Mustermann', '4917')).toBe('EM');
    expect(initials('  ana ', '4917')).toBe('A');
    expect(initials('José María López', '4917')).toBe('JL');
    expect(initials('', '491712345678')).toBe('78');
    expect(initials('🙂 12', '491712345678')).toBe('78');
  });
});

describe('parseNetworkBody', () => {
  const NUMBER = { wabaId: '1', displayPhoneNumber: '1', phoneNumberId: '1' };

  it('reads contacts, messages of any type, and statuses with conversation expiry', () => {
    const body = JSON.stringify(
      messagesWebhookBody(NUMBER, {
        contacts: [{ profile: { name: 'Ana' }, wa_id: '49151' }],
        messages: [
          {
            from: '49151',
            id: 'w1',
            timestamp: '100',
            type: 'hologram',
            referral: { source_type: 'ad' },
          },
        ],
        statuses: [
          {
            id: 'w0',
            status: 'read',
            timestamp: '90',
            recipient_id: '49151',
            conversation: { id: 'c', expiration_timestamp: '5000' },
          },
        ],
      }),
    );
    const parsed = parseNetworkBody(body);
    expect(parsed?.contacts).toEqual([{ wa_id: '49151', name: 'Ana' }]);
    expect(parsed?.ignored).toBe(0);
    expect(parsed?.messages[0]).toMatchObject({
      wamid: 'w1',
      from: '49151',
      timestamp: 100,
      type: 'hologram',
      fromAd: true,
    });
    expect(parsed?.statuses[0]).toMatchObject({ wamid: 'w0', status: 'read', conversationExpiresAt: 5000 });
  });

  it('returns null for what is not a network body, and skips entries without a value', () => {
    expect(parseNetworkBody('not json')).toBeNull();
    expect(parseNetworkBody('{"entry": "nope"}')).toBeNull();
    expect(parseNetworkBody('{"entry":[{"changes":[{"field":"x"}]}]}')).toEqual({
      contacts: [],
      messages: [],
      statuses: [],
      ignored: 0,
    });
  });

  it('leaves out customers that are not wa_ids (digits only, 5 to 20), keeping the others', () => {
    const value = {
      contacts: [
        { profile: { name: 'Plus' }, wa_id: '+4915112345678' },
        { profile: { name: 'Ana' }, wa_id: '4915112345678' },
      ],
      messages: [
        { from: 'abc12345', id: 'w1', timestamp: '100', type: 'text' },
        { from: '1234', id: 'w2', timestamp: '100', type: 'text' },
        { from: '4915112345678', id: 'w3', timestamp: '100', type: 'text' },
      ],
      statuses: [{ id: 'w0', status: 'read', timestamp: '90', recipient_id: '49 151 123' }],
    };
    const parsed = parseNetworkBody(JSON.stringify({ entry: [{ changes: [{ value }] }] }));
    expect(parsed?.contacts.map((c) => c.wa_id)).toEqual(['4915112345678']);
    expect(parsed?.messages.map((m) => m.wamid)).toEqual(['w3']);
    expect(parsed?.statuses).toEqual([]);
    expect(parsed?.ignored).toBe(4);
  });
});

describe('keyed queue', () => {
  it('runs one key in order and other keys alongside', async () => {
    const q = createKeyedQueue();
    const log: string[] = [];
    let releaseFirst: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      releaseFirst = r;
    });
    const a1 = q.run('a', async () => {
      await gate;
      log.push('a1');
    });
    const a2 = q.run('a', async () => {
      log.push('a2');
    });
    const b1 = q.run('b', async () => {
      log.push('b1');
    });
    await b1;
    expect(log).toEqual(['b1']);
    releaseFirst();
    await Promise.all([a1, a2]);
    expect(log).toEqual(['b1', 'a1', 'a2']);
    await Promise.resolve();
    expect(q.size).toBe(0);
  });

  it('keeps going after a failed task', async () => {
    const q = createKeyedQueue();
    await expect(q.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await q.run('a', async () => 'next')).toBe('next');
  });
});

describe('containsPattern', () => {
  it('matches anywhere and takes LIKE wildcards literally', () => {
    expect(containsPattern('Ana')).toBe('%ana%');
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

describe('carriesCustomerFiles', () => {
  const NUMBER = { wabaId: '1', displayPhoneNumber: '1', phoneNumberId: '1' };
  const bodyWith = (types: string[], statuses = 0) =>
    parseNetworkBody(
      JSON.stringify(
        messagesWebhookBody(NUMBER, {
          messages: types.map((type, i) => ({ from: '49151', id: `w${i}`, timestamp: '100', type })),
          statuses: Array.from({ length: statuses }, (_, i) => ({
            id: `s${i}`,
            status: 'delivered',
            timestamp: '90',
            recipient_id: '49151',
          })),
        }),
      ),
    );

  it('is true when a customer message is of a type with a file, whatever else the body holds', () => {
    for (const type of ['image', 'audio', 'video', 'document', 'sticker'])
      expect(carriesCustomerFiles(bodyWith(['text', type])), type).toBe(true);
  });

  it('is false for statuses, texts and the other types, and for what is not a network body', () => {
    expect(carriesCustomerFiles(bodyWith([], 3))).toBe(false);
    expect(carriesCustomerFiles(bodyWith(['text', 'location', 'contacts', 'reaction', 'interactive']))).toBe(
      false,
    );
    expect(carriesCustomerFiles(parseNetworkBody('not json'))).toBe(false);
  });
});
