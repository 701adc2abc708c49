import { type ImportedLine, ServiceError } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import {
  createClock,
  decideCustomer,
  importedMedia,
  importedMessageId,
  importedPayload,
} from './chat-import.ts';

const BUSINESS = '+1 555 000 1111';
const line = (over: Partial<ImportedLine> = {}): ImportedLine => ({
  line: 1,
  local_time: '2024-06-01T09:00:00',
  sender: 'Jane',
  sender_number: null,
  text: 'hello',
  edited: false,
  media: null,
  ordinal: 0,
  position: 0,
  ...over,
});
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return 'no error';
};

describe('the customer of an import', () => {
  it('is the one sender written as a number when no participants are given', () => {
    const c = decideCustomer(
      [],
      [
        { name: 'Shop', number: null },
        { name: '+44 7700 900123', number: '447700900123' },
      ],
      BUSINESS,
    );
    expect(c.waId).toBe('447700900123');
    expect([c.isCustomer('+44 7700 900123', '447700900123'), c.isCustomer('Shop', null)]).toEqual([
      true,
      false,
    ]);
  });

  it('is the participant who is not the business, matched by name as the export writes it', () => {
    const c = decideCustomer(
      [
        { handle: 'Jane Doe', phone_number: '+44 7700 900123' },
        { handle: 'Corner Shop', phone_number: BUSINESS },
      ],
      [
        { name: '~ Jane  Doe', number: null },
        { name: 'Corner Shop', number: null },
      ],
      '15550001111',
    );
    expect([c.waId, c.name, c.isCustomer('\u200Ejane doe', null), c.isCustomer('Corner Shop', null)]).toEqual(
      ['447700900123', 'Jane Doe', true, false],
    );
  });

  it.each([
    ['three senders', [], ['A', 'B', 'C'], 'too_many_chat_participants'],
    ['names only and no participants', [], ['Jane', 'Shop'], 'chat_customer_unknown'],
    [
      'two customers given',
      [
        ['Jane', '+44 7700 900123'],
        ['Bob', '+44 7700 900456'],
      ],
      ['Jane', 'Bob'],
      'chat_customer_unknown',
    ],
    ['only the business given', [['Shop', BUSINESS]], ['Jane', 'Shop'], 'chat_customer_unknown'],
    [
      'a handle nobody wrote under',
      [['Janet', '+44 7700 900123']],
      ['Jane', 'Shop'],
      'chat_customer_unknown',
    ],
  ] as const)('%s: %s', (_name, participants, senders, code) => {
    expect(
      codeOf(() =>
        decideCustomer(
          participants.map(([handle, phone_number]) => ({ handle, phone_number })),
          senders.map((name) => ({ name, number: null })),
          BUSINESS,
        ),
      ),
    ).toBe(code);
  });
});

describe('local times to UTC', () => {
  it('applies the one offset without a zone', () => {
    expect(createClock(-180, undefined)('2024-01-15T09:30:00')).toBe(Date.UTC(2024, 0, 15, 12, 30) / 1000);
  });

  it('applies the zone’s offset of that day when a zone is given (summer and winter)', () => {
    const berlin = createClock(0, 'Europe/Berlin');
    expect(berlin('2024-01-15T09:30:00')).toBe(Date.UTC(2024, 0, 15, 8, 30) / 1000);
    expect(berlin('2024-07-15T09:30:00')).toBe(Date.UTC(2024, 6, 15, 7, 30) / 1000);
  });

  it('reads a wall-clock time that occurs twice (clocks going back) as the earlier instant', () => {
    // 31 March → 27 October 2024: at 03:00 CEST Berlin goes back to 02:00 CET, so 02:30 happens twice.
    expect(createClock(0, 'Europe/Berlin')('2024-10-27T02:30:00')).toBe(Date.UTC(2024, 9, 27, 0, 30) / 1000);
  });

  it('reads a wall-clock time that never occurs (clocks going forward) with the larger offset', () => {
    // 31 March 2024: at 02:00 CET Berlin jumps to 03:00 CEST; 02:30 is read at UTC+2.
    expect(createClock(0, 'Europe/Berlin')('2024-03-31T02:30:00')).toBe(Date.UTC(2024, 2, 31, 0, 30) / 1000);
  });
});

describe('imported message ids', () => {
  it('are stable for the same line and differ for any change, repeats included', () => {
    const id = importedMessageId('447700900123', line());
    expect(importedMessageId('447700900123', line({ line: 40, position: 7 }))).toBe(id);
    for (const other of [
      line({ ordinal: 1 }),
      line({ text: 'hello!' }),
      line({ sender: 'Shop' }),
      line({ local_time: '2024-06-01T09:01:00' }),
    ]) {
      expect(importedMessageId('447700900123', other)).not.toBe(id);
    }
    expect(importedMessageId('447700900999', line())).not.toBe(id);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Led by the time as written: later lines sort after earlier ones.
    expect(importedMessageId('447700900123', line({ local_time: '2024-06-01T09:00:01' })) > id).toBe(true);
    expect(importedMessageId('447700900123', line({ local_time: '2024-05-31T23:59:59' })) < id).toBe(true);
  });

  it('never change: an export imported again finds the ids stored before', () => {
    expect(importedMessageId('447700900123', line())).toBe('018fd306-f680-8c23-bc81-036934591ccc');
    const media = { kind: 'image' as const, file_name: 'IMG-1.jpg', mime_type: null, link: null };
    expect(importedMessageId('447700900123', line({ media, ordinal: 2, text: 'ça \u{1F600}' }))).toBe(
      '018fd306-f680-8d90-bdea-d5329e785d9d',
    );
  });
});

describe('network-shaped bodies', () => {
  it('says edited: true of a message the app marked edited', () => {
    expect(importedPayload('447700900123', 'id-1', line({ edited: true }), false, 1).payload).toMatchObject({
      text: { body: 'hello' },
      edited: true,
    });
  });

  it('shapes customer text like a received message and ours like a send, both marked imported', () => {
    expect(importedPayload('447700900123', 'id-1', line(), false, 1717232400)).toEqual({
      type: 'text',
      payload: {
        from: '447700900123',
        id: 'id-1',
        timestamp: '1717232400',
        type: 'text',
        text: { body: 'hello' },
        imported: true,
      },
    });
    expect(importedPayload('447700900123', 'id-1', line(), true, 1717232400).payload).toMatchObject({
      messaging_product: 'whatsapp',
      to: '447700900123',
      type: 'text',
      imported: true,
    });
  });

  it('keeps media without a stored file as media: null, with the caption and file name', () => {
    const media = { kind: 'image' as const, file_name: 'IMG-1.jpg', mime_type: null, link: null };
    expect(
      importedPayload('447700900123', 'x', line({ text: 'look', media }), false, 1).payload,
    ).toMatchObject({
      type: 'image',
      image: { caption: 'look' },
      media: null,
      file_name: 'IMG-1.jpg',
    });
    const stored = { ...media, mime_type: 'image/jpeg', link: 'https://inbox.example/api/v1/media/1/' };
    expect(importedPayload('447700900123', 'x', line({ media: stored }), true, 1).payload).toMatchObject({
      image: { link: stored.link, caption: 'hello', mime_type: 'image/jpeg' },
      media: { link: stored.link, file_name: 'IMG-1.jpg', mime_type: 'image/jpeg' },
    });
  });

  it('carries a file stored in the media service by id and link, and makes it the Message’s media', () => {
    const file = {
      id: '3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e',
      file: 'https://inbox.example/api/v1/media/3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e/',
      mime_type: 'application/pdf',
      size: 1234,
      sha256: 'a'.repeat(64),
    };
    const media = {
      kind: 'document' as const,
      file_name: 'Quote 118.pdf',
      mime_type: 'application/pdf',
      link: file.file,
      stored: file,
    };
    const imported = line({ text: 'the quote', media });
    expect(importedPayload('447700900123', 'x', imported, false, 1).payload).toMatchObject({
      type: 'document',
      document: {
        id: file.id,
        link: file.file,
        sha256: file.sha256,
        mime_type: 'application/pdf',
        caption: 'the quote',
        filename: 'Quote 118.pdf',
      },
      media: { id: file.id, link: file.file, file_name: 'Quote 118.pdf' },
    });
    expect(importedMedia(imported)).toEqual({ ...file, status: 'stored' });
    expect(importedMedia(line({ media: { ...media, link: null, stored: null } }))).toBeNull();
    expect(importedMedia(line())).toBeNull();
    // The id does not depend on the file being stored: an import with the files finds the same messages.
    const withoutFile = line({
      text: 'the quote',
      media: { ...media, mime_type: null, link: null, stored: null },
    });
    expect(importedMessageId('447700900123', imported)).toBe(importedMessageId('447700900123', withoutFile));
  });
});
