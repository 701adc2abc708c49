import { type ChatsDatabase, startAuditLog } from '@switchboard/chats';
import { createDb, createLogger } from '@switchboard/kit';
import { waitFor } from '@switchboard/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, auth, login, startTestGateway, type TestGateway } from '../services/gateway/test/helpers.ts';

let gw: TestGateway;
let stopChats: () => Promise<void>;

beforeAll(async () => {
  gw = await startTestGateway();
  // chats owns the event log; it shares the instance's database and NATS namespace.
  const chatsDb = createDb<ChatsDatabase>({ url: gw.databaseUrl, applicationName: 'chats-audit-test' });
  const audit = await startAuditLog({ bus: gw.bus, db: chatsDb, log: createLogger('chats', 'silent') });
  stopChats = async () => {
    audit.rpc.unsubscribe();
    await audit.consumption.stop();
    await chatsDb.destroy();
  };
});

afterAll(async () => {
  await stopChats();
  await gw.close();
});

describe('event log', () => {
  it('records user and group changes with the acting user, newest first', async () => {
    const admin = await login(gw, ADMIN.username, ADMIN.password);
    const group = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/groups/',
      headers: auth(admin),
      payload: { name: 'Sales' },
    });
    const user = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: auth(admin),
      payload: { username: 'seller', password: 'a sturdy passphrase 42' },
    });
    await gw.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${user.json().id}/`,
      headers: auth(admin),
    });
    const list = async () =>
      (await gw.app.inject({ url: '/api/v1/audit_logs/', headers: auth(admin) })).json();
    await waitFor(
      async () => (await list()).count >= 4,
      10_000,
      'four entries (admin, group, user, deactivation)',
    );
    const body = await list();
    const actions = body.results.map((r: { action: string }) => r.action);
    expect(actions.slice(0, 3)).toEqual(['user.deactivated', 'user.created', 'group.created']);
    expect(body.results[2]).toMatchObject({
      target_type: 'group',
      target_id: String(group.json().id),
      actor: { username: ADMIN.username },
      details: { name: 'Sales' },
    });
    const filtered = (
      await gw.app.inject({
        url: `/api/v1/audit_logs/?target_type=user&target_id=${user.json().id}`,
        headers: auth(admin),
      })
    ).json();
    expect(filtered.count).toBe(2);

    const agent = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/users/',
      headers: auth(admin),
      payload: { username: 'agent', password: 'a sturdy passphrase 42' },
    });
    expect(agent.statusCode).toBe(201);
    const agentToken = await login(gw, 'agent', 'a sturdy passphrase 42');
    expect((await gw.app.inject({ url: '/api/v1/audit_logs/', headers: auth(agentToken) })).statusCode).toBe(
      403,
    );
  });
});
