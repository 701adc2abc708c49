import { describe, expect, it } from 'vitest';
import { type LegacyDurableView, legacyDurableStep } from './legacy-durable.ts';

const view = (v: Partial<LegacyDurableView>): LegacyDurableView => ({
  now: 10_000,
  graceFrom: 0,
  graceMs: 5_000,
  cutoff: { seq: 100, graceFrom: 0 },
  state: { pending: 3, ackPending: 1, ackFloor: 90 },
  ...v,
});

describe('legacyDurableStep', () => {
  it('is gone when the durable does not exist, whatever else', () => {
    expect(legacyDurableStep(view({ state: null }))).toBe('gone');
    expect(legacyDurableStep(view({ state: null, now: 1 }))).toBe('gone');
  });

  it('keeps reading during the grace, even with nothing left on it', () => {
    const empty = { pending: 0, ackPending: 0, ackFloor: 500 };
    expect(legacyDurableStep(view({ now: 4_999, cutoff: undefined, state: empty }))).toBe('wait');
  });

  it('takes the cutoff once the grace is over, before deciding anything', () => {
    expect(legacyDurableStep(view({ now: 5_000, cutoff: undefined }))).toBe('take_cutoff');
  });

  it('waits while messages up to the cutoff are unacknowledged', () => {
    expect(legacyDurableStep(view({ state: { pending: 0, ackPending: 1, ackFloor: 99 } }))).toBe('wait');
    expect(legacyDurableStep(view({ state: { pending: 2, ackPending: 0, ackFloor: 50 } }))).toBe('wait');
  });

  it('deletes once everything up to the cutoff is acknowledged, though later messages keep coming', () => {
    expect(legacyDurableStep(view({ state: { pending: 7, ackPending: 2, ackFloor: 100 } }))).toBe('delete');
  });

  it('deletes when nothing is left on it (its floor can stop below a cutoff it was never given)', () => {
    expect(legacyDurableStep(view({ state: { pending: 0, ackPending: 0, ackFloor: 98 } }))).toBe('delete');
  });

  it('holds a cutoff taken for an earlier grace void once the grace starts again', () => {
    const acked = { pending: 4, ackPending: 0, ackFloor: 150 };
    // Another body needed the forward at 8,000: a new grace, and the cutoff of 100 no longer counts.
    expect(legacyDurableStep(view({ now: 10_000, graceFrom: 8_000, state: acked }))).toBe('wait');
    expect(legacyDurableStep(view({ now: 13_000, graceFrom: 8_000, state: acked }))).toBe('take_cutoff');
    expect(
      legacyDurableStep(
        view({ now: 13_000, graceFrom: 8_000, cutoff: { seq: 200, graceFrom: 8_000 }, state: acked }),
      ),
    ).toBe('wait');
  });
});
