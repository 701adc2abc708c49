import type { Role } from '@switchboard/proto';
import { ServiceError } from '@switchboard/proto';

/** The roles that take a seat; the configurator (a service account) does not. */
export const SEAT_ROLES = ['admin', 'user'] as const;

/** Whether an active user of this role takes a seat (SEAT_ROLES). */
export function takesSeat(user: { role: Role; is_active: boolean }): boolean {
  return user.is_active && user.role !== 'configurator';
}

/** A change must check the seats when it makes a user take a seat they did not take before. */
export function needsSeat(
  before: { role: Role; is_active: boolean },
  after: { role: Role; is_active: boolean },
): boolean {
  return takesSeat(after) && !takesSeat(before);
}

/** Throws `seat_limit_reached` when `taken` seats (the user being changed not counted) leave none. */
export function assertSeatLeft(taken: number, maxSeats: number): void {
  if (taken >= maxSeats) {
    throw new ServiceError(
      'seat_limit_reached',
      `All ${maxSeats} seats are taken. Deactivate a user or raise max_number_of_seats.`,
    );
  }
}
