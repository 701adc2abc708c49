import { describe, expect, it } from 'vitest';
import { createOrderGate } from './order-gate.ts';

describe('order gate', () => {
  it('lets a body go only when no earlier body of its customer is pending', () => {
    let t = 0;
    const gate = createOrderGate({ slackMs: 10_000, now: () => t });
    expect(gate.blockedBy('a', 10)).toBeUndefined();
    gate.pend('a', 10, 500);
    expect(gate.blockedBy('a', 10)).toBeUndefined();
    expect(gate.blockedBy('a', 11)).toEqual({ seq: 10, dueInMs: 500 });
    // Other customers are not held.
    expect(gate.blockedBy('b', 11)).toBeUndefined();
    gate.pend('a', 11, 600);
    t = 300;
    expect(gate.blockedBy('a', 12)).toEqual({ seq: 10, dueInMs: 200 });
    gate.done('a', 10);
    // 11 comes before 12 even once 10 is through.
    expect(gate.blockedBy('a', 12)).toEqual({ seq: 11, dueInMs: 300 });
    expect(gate.blockedBy('a', 11)).toBeUndefined();
    gate.done('a', 11);
    expect(gate.blockedBy('a', 12)).toBeUndefined();
    expect(gate.size).toBe(0);
  });

  it('forgets a body that did not come back in time (another worker took it)', () => {
    let t = 0;
    const gate = createOrderGate({ slackMs: 1_000, now: () => t });
    gate.pend('a', 10, 500);
    t = 1_499;
    expect(gate.blockedBy('a', 11)?.seq).toBe(10);
    t = 1_500;
    expect(gate.blockedBy('a', 11)).toBeUndefined();
    expect(gate.size).toBe(0);
  });
});
