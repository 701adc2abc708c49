import { waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, type Inbox, startInbox } from './support/inbox.ts';

/**
 * The event log across services: the gateway writes user and group changes to its outbox, the
 * relay publishes them, and chats, which owns the log, stores and serves them (`audit_logs/`).
 */
let inbox: Inbox;

beforeAll(async () => {
  inbox = await startInbox();
});

afterAll(async () => {
  await inbox?.stop();
});

async function json(res: Response): Promise<{ id?: number } & Record<string, unknown>> {
  if (res.status >= 300) throw new Error(`${res.status}: ${await res.text()}`);
  return res.status === 204 ? {} : ((await res.json()) as { id?: number } & Record<string, unknown>);
}

describe('event log', () => {
  it('records user and group changes with the acting user, newest first', async () => {
    const token = await inbox.login();
    const group = await json(await inbox.api('POST', '/api/v1/groups/', { token, body: { name: 'Sales' } }));
    const user = await json(
      await inbox.api('POST', '/api/v1/users/', {
        token,
        body: { username: 'seller', password: 'a sturdy passphrase 42' },
      }),
    );
    await json(await inbox.api('DELETE', `/api/v1/users/${user.id}/`, { token }));
    const list = async () =>
      (await json(await inbox.api('GET', '/api/v1/audit_logs/', { token }))) as {
        count: number;
        results: Array<{ action: string }>;
      };
    await waitFor(
      async () => (await list()).count >= 4,
      10_000,
      'four entries (admin, group, user, deactivation)',
    );
    const body = await list();
    const actions = body.results.map((r) => r.action);
    expect(actions.slice(0, 3)).toEqual(['user.deactivated', 'user.created', 'group.created']);
    expect(body.results[2]).toMatchObject({
      target_type: 'group',
      target_id: String(group.id),
      actor: { username: ADMIN.username },
      details: { name: 'Sales' },
    });
    const filtered = await json(
      await inbox.api('GET', `/api/v1/audit_logs/?target_type=user&target_id=${user.id}`, { token }),
    );
    expect(filtered.count).toBe(2);

    await json(
      await inbox.api('POST', '/api/v1/users/', {
        token,
        body: { username: 'agent', password: 'a sturdy passphrase 42' },
      }),
    );
    const agentToken = await inbox.login('agent', 'a sturdy passphrase 42');
    expect((await inbox.api('GET', '/api/v1/audit_logs/', { token: agentToken })).status).toBe(403);
  });

  it('answers `at` in POSIX seconds and a limit past the maximum with the largest page', async () => {
    const token = await inbox.login();
    // More groups, and so more entries, than one page holds.
    for (let i = 0; i < 105; i++) {
      await json(await inbox.api('POST', '/api/v1/groups/', { token, body: { name: `Team ${i}` } }));
    }
    const page = async (path: string) => {
      const res = await inbox.api('GET', path, { token });
      expect([path, res.status]).toEqual([path, 200]);
      return (await res.json()) as {
        count: number;
        next: string | null;
        previous: string | null;
        results: Array<{ at?: number }>;
      };
    };
    await waitFor(
      async () => (await page('/api/v1/audit_logs/?action=group.created')).count >= 106,
      15_000,
      'an entry per group',
    );
    for (const path of ['/api/v1/audit_logs/?limit=100000', '/api/v1/groups/?limit=100000']) {
      const body = await page(path);
      expect(body.count).toBeGreaterThan(100);
      expect(body.results).toHaveLength(100);
      expect(body.previous).toBeNull();
      expect(body.next).toMatch(/[?&]limit=100&offset=100$/);
    }
    const now = Math.floor(Date.now() / 1000);
    const { results } = await page('/api/v1/audit_logs/?limit=100');
    for (const entry of results) {
      expect(Number.isInteger(entry.at)).toBe(true);
      expect(Math.abs((entry.at ?? 0) - now)).toBeLessThanOrEqual(60);
    }
    for (const bad of ['0', '-1', 'abc', '2.5']) {
      expect((await inbox.api('GET', `/api/v1/audit_logs/?limit=${bad}`, { token })).status).toBe(400);
    }
  });
});
