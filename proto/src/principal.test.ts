import { describe, expect, it } from 'vitest';
import { type ChatAccess, canReadChat, canWriteChat, type Principal } from './principal.ts';

const principal = (read: ChatAccess, write: ChatAccess, extra: Partial<Principal> = {}): Principal => ({
  user_id: 7,
  username: 'agent',
  role: 'user',
  group_ids: [3],
  permissions: { can_use_tags: true, can_read_chats: read, can_write_to_chats: write },
  assigned_wa_ids: ['4911'],
  ...extra,
});
const chat = (assigned_to_user: number | null, assigned_group: number | null, wa_id = '4999') => ({
  wa_id,
  assigned_to_user,
  assigned_group,
});

describe('chat permissions', () => {
  it('all reads and writes every chat; none reads nothing', () => {
    expect(canReadChat(principal('all', 'all'), chat(null, null))).toBe(true);
    expect(canWriteChat(principal('all', 'all'), chat(99, null))).toBe(true);
    expect(canReadChat(principal('none', 'none'), chat(7, null))).toBe(false);
  });

  it('assigned means the user, one of their groups, or one of their wa_ids', () => {
    const p = principal('assigned', 'assigned');
    expect(canReadChat(p, chat(7, null))).toBe(true);
    expect(canReadChat(p, chat(null, 3))).toBe(true);
    expect(canReadChat(p, chat(null, null, '4911'))).toBe(true);
    expect(canReadChat(p, chat(8, 4))).toBe(false);
    expect(canReadChat(p, chat(null, null))).toBe(false);
  });

  it('writing needs reading too', () => {
    expect(canWriteChat(principal('assigned', 'all'), chat(8, null))).toBe(false);
    expect(canWriteChat(principal('all', 'assigned'), chat(8, null))).toBe(false);
    expect(canWriteChat(principal('all', 'assigned'), chat(7, null))).toBe(true);
    expect(canReadChat(principal('all', 'none'), chat(8, null))).toBe(true);
    expect(canWriteChat(principal('all', 'none'), chat(8, null))).toBe(false);
  });

  it('the configurator never reads or writes chats, whatever its permissions say', () => {
    const c = principal('all', 'all', { role: 'configurator' });
    expect(canReadChat(c, chat(null, null))).toBe(false);
    expect(canWriteChat(c, chat(null, null))).toBe(false);
  });
});
