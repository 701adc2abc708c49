import { describe, expect, it } from 'vitest';
import { assertSeatLeft, needsSeat, SEAT_ROLES, takesSeat } from './seats.ts';

describe('seats', () => {
  it('admins and agents take a seat, the configurator does not', () => {
    expect(SEAT_ROLES).toEqual(['admin', 'user']);
    expect(takesSeat({ role: 'admin', is_active: true })).toBe(true);
    expect(takesSeat({ role: 'user', is_active: true })).toBe(true);
    expect(takesSeat({ role: 'configurator', is_active: true })).toBe(false);
  });

  it('a deactivated user frees the seat', () => {
    expect(takesSeat({ role: 'user', is_active: false })).toBe(false);
  });

  it('a change needs a seat only when it makes the user take one', () => {
    const active = { role: 'user' as const, is_active: true };
    const inactive = { role: 'user' as const, is_active: false };
    const configurator = { role: 'configurator' as const, is_active: true };
    expect(needsSeat(inactive, active)).toBe(true);
    expect(needsSeat(configurator, active)).toBe(true);
    expect(needsSeat(active, active)).toBe(false);
    expect(needsSeat(active, { role: 'admin', is_active: true })).toBe(false);
    expect(needsSeat(active, inactive)).toBe(false);
  });

  it('refuses when every seat is taken', () => {
    expect(() => assertSeatLeft(4, 5)).not.toThrow();
    expect(() => assertSeatLeft(5, 5)).toThrow(expect.objectContaining({ code: 'seat_limit_reached' }));
    expect(() => assertSeatLeft(6, 5)).toThrow('All 5 seats are taken.');
  });
});
