import type { Principal } from '@switchboard/proto';

/**
 * A principal as the gateway would resolve it, for tests and benchmarks that act on the bus
 * without a gateway: user `user<id>`, every permission, no groups.
 */
export function principal(userId: number, role: Principal['role'] = 'user'): Principal {
  return {
    user_id: userId,
    username: `user${userId}`,
    role,
    group_ids: [],
    permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    assigned_wa_ids: [],
  };
}

/** User 1, an admin. */
export const admin: Principal = principal(1, 'admin');
