import { messagesWebhookBody, type NetworkEvent, type Principal } from '@switchboard/proto';
import { describe, expect, it } from 'vitest';
import { audienceOf, filterBody } from '../src/domain/audience.ts';

const NUMBER = { wabaId: 'waba-1', displayPhoneNumber: '15550001234', phoneNumberId: 'pn-1' };
const A = '4915550000001';
const B = '4915550000002';

function person(over: Partial<Principal> & Pick<Principal, 'role'>): Principal {
  return {
    user_id: 7,
    username: 'someone',
    group_ids: [3],
    permissions: { can_use_tags: true, can_read_chats: 'all', can_write_to_chats: 'all' },
    assigned_wa_ids: [],
    ...over,
  };
}

const text = (from: string, id: string) => ({
  from,
  id,
  timestamp: '1700000000',
  type: 'text',
  text: { body: `hi from ${from}` },
});

/** A body carrying both customers, as the network may batch them. */
const mixedBody = JSON.stringify(
  messagesWebhookBody(NUMBER, {
    contacts: [
      { wa_id: A, profile: { name: 'Ana' } },
      { wa_id: B, profile: { name: 'Bo' } },
    ],
    messages: [text(A, 'wamid.a'), text(B, 'wamid.b')],
    statuses: [{ id: 'wamid.out', status: 'read', timestamp: '1700000001', recipient_id: B }],
  }),
);

function event(chats: NetworkEvent['chats'], body = mixedBody): NetworkEvent {
  return {
    event_id: 'e1',
    kinds: ['message', 'status'],
    wa_ids: (chats ?? []).map((c) => c.wa_id),
    ...(chats && { chats }),
    received_at: 1,
    body,
  };
}

const assignedToUser7 = [
  { wa_id: A, assigned_to_user: 7, assigned_group: null },
  { wa_id: B, assigned_to_user: null, assigned_group: null },
];

describe('audienceOf', () => {
  it('gives admins and the configurator everything, a deactivated owner nothing', () => {
    expect(audienceOf(event(assignedToUser7), person({ role: 'admin' }))).toEqual({ kind: 'all' });
    expect(audienceOf(event(assignedToUser7), person({ role: 'configurator' }))).toEqual({ kind: 'all' });
    expect(audienceOf(event(assignedToUser7), null)).toEqual({ kind: 'none', reason: 'owner_inactive' });
  });

  it('follows can_read_chats for users', () => {
    const all = person({ role: 'user' });
    const none = person({
      role: 'user',
      permissions: { can_use_tags: true, can_read_chats: 'none', can_write_to_chats: 'none' },
    });
    expect(audienceOf(event(assignedToUser7), all)).toEqual({ kind: 'all' });
    expect(audienceOf(event(assignedToUser7), none)).toEqual({ kind: 'none', reason: 'not_permitted' });
  });

  it('cuts a mixed body down to the chats an assigned-only user may read', () => {
    const assigned = person({
      role: 'user',
      permissions: { can_use_tags: true, can_read_chats: 'assigned', can_write_to_chats: 'assigned' },
    });
    const a = audienceOf(event(assignedToUser7), assigned);
    expect(a.kind).toBe('partial');
    if (a.kind !== 'partial') return;
    const value = (
      JSON.parse(a.body) as { entry: Array<{ changes: Array<{ value: Record<string, unknown> }> }> }
    ).entry[0]?.changes[0]?.value;
    expect(value?.contacts).toEqual([{ wa_id: A, profile: { name: 'Ana' } }]);
    expect(value?.messages).toEqual([text(A, 'wamid.a')]);
    expect(value?.statuses).toEqual([]);
    expect(value?.metadata).toBeDefined();
  });

  it('counts a group assignment and assigned_wa_ids as assigned', () => {
    const viaGroup = person({
      role: 'user',
      user_id: 99,
      permissions: { can_use_tags: true, can_read_chats: 'assigned', can_write_to_chats: 'none' },
    });
    const chats = [{ wa_id: A, assigned_to_user: null, assigned_group: 3 }];
    expect(audienceOf(event(chats), viaGroup)).toEqual({ kind: 'all' });
    const viaList = { ...viaGroup, group_ids: [], assigned_wa_ids: [A] };
    expect(audienceOf(event(chats), viaList)).toEqual({ kind: 'all' });
    expect(audienceOf(event(chats), { ...viaGroup, group_ids: [] })).toEqual({
      kind: 'none',
      reason: 'not_permitted',
    });
  });

  it('sends an event that concerns no chat to admins only', () => {
    const nothing = event([], '{"object":"whatsapp_business_account","entry":[]}');
    expect(audienceOf(nothing, person({ role: 'user' }))).toEqual({ kind: 'none', reason: 'not_permitted' });
    expect(audienceOf(nothing, person({ role: 'admin' }))).toEqual({ kind: 'all' });
  });

  it('treats an event without chat facts as unassigned chats of its wa_ids', () => {
    const legacy: NetworkEvent = {
      event_id: 'e2',
      kinds: ['message'],
      wa_ids: [A],
      received_at: 1,
      body: mixedBody,
    };
    const assigned = person({
      role: 'user',
      permissions: { can_use_tags: true, can_read_chats: 'assigned', can_write_to_chats: 'assigned' },
    });
    expect(audienceOf(legacy, assigned)).toEqual({ kind: 'none', reason: 'not_permitted' });
    expect(audienceOf(legacy, person({ role: 'user' }))).toEqual({ kind: 'all' });
  });
});

describe('filterBody', () => {
  it('answers null for bodies that are not messages bodies or keep nothing', () => {
    expect(filterBody('not json', new Set([A]))).toBeNull();
    expect(filterBody('{"entry":"x"}', new Set([A]))).toBeNull();
    expect(filterBody(mixedBody, new Set(['000']))).toBeNull();
  });
});
