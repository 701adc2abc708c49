import { createLogger } from '@switchboard/kit';
import { describe, expect, it } from 'vitest';
import { persistWrite, SENT_MARK_RETRY_MAX_MS } from './persist-write.ts';

const log = createLogger('persist-write-test', 'silent');
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** A write that fails `times` times with `fail()`, then succeeds. */
function failing(times: number, fail: () => Error) {
  let calls = 0;
  return {
    write: async () => {
      calls++;
      if (calls <= times) throw fail();
    },
    calls: () => calls,
  };
}

describe('persistWrite', () => {
  it('keeps the mark of a send the network took until the database takes it, at least every second', async () => {
    const waits: number[] = [];
    const w = failing(40, refused);
    await persistWrite(w.write, {
      what: 'sent message',
      log,
      untilStored: true,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(w.calls()).toBe(41);
    expect(Math.max(...waits)).toBeLessThanOrEqual(SENT_MARK_RETRY_MAX_MS);
  });

  it('gives other writes up after eight transient failures', async () => {
    const w = failing(40, refused);
    await expect(persistWrite(w.write, { what: 'failed send', log, sleep: async () => {} })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    expect(w.calls()).toBe(8);
  });

  it('never retries a failure that is not transient', async () => {
    const w = failing(1, () => new TypeError('a bug'));
    await expect(
      persistWrite(w.write, { what: 'sent message', log, untilStored: true, sleep: async () => {} }),
    ).rejects.toThrow('a bug');
    expect(w.calls()).toBe(1);
  });
});
