import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { type AuditEntry, auditRecorded, streamName } from '@switchboard/proto';
import { waitFor } from '@switchboard/testkit';
import { type NatsServerHandle, startNatsServer } from '@switchboard/testkit/infra';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, auth, login, startTestGateway, type TestGateway } from './helpers.ts';

const OUTAGE_MS = 30_000;

let nats: NatsServerHandle | undefined;
let gw: TestGateway | undefined;
let dir = '';

afterAll(async () => {
  await gw?.close();
  await nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Every event-log entry the gateway published, from the commands stream, in order. */
async function publishedEntries(g: TestGateway): Promise<AuditEntry[]> {
  const jsm = await jetstreamManager(g.nc);
  const stream = streamName(g.bus.instance, 'commands');
  const info = await jsm.streams.info(stream);
  const subject = auditRecorded.subject(g.bus.instance);
  const entries: AuditEntry[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m?.subject === subject) entries.push(m.json<AuditEntry>());
  }
  return entries;
}

describe('event-log outbox', () => {
  it('loses no entry and duplicates none through a 30 s NATS outage', async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-outbox-'));
    nats = await startNatsServer({ storeDir: dir });
    const port = nats.port;
    gw = await startTestGateway({}, { natsUrl: nats.url });
    const g = gw;
    const token = await login(g, ADMIN.username, ADMIN.password);
    const api = async (method: 'POST' | 'PATCH', url: string, payload: unknown) => {
      const res = await g.app.inject({ method, url, headers: auth(token), payload: payload as object });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json() as { id: number };
    };
    // The first admin's entry is out before the outage.
    await waitFor(async () => (await publishedEntries(g)).length === 1, 10_000, 'first entry published');

    await nats.stop();
    const down = Date.now();
    const actions: string[] = [];
    for (let i = 0; i < 4; i++) {
      const u = await api('POST', '/api/v1/users/', {
        username: `outage-${i}`,
        password: `Harbour lantern ${i} glows bright`,
      });
      actions.push('user.created');
      await api('PATCH', `/api/v1/users/${u.id}/`, { first_name: `Name ${i}` });
      actions.push('user.updated');
    }
    const group = await api('POST', '/api/v1/groups/', { name: 'Night shift' });
    actions.push('group.created');
    await api('PATCH', `/api/v1/groups/${group.id}/`, { name: 'Late shift' });
    actions.push('group.updated');
    // The changes were answered during the outage; the outage itself lasts its full length.
    expect(Date.now() - down).toBeLessThan(OUTAGE_MS);
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS - (Date.now() - down)));

    nats = await startNatsServer({ storeDir: dir, port });
    await waitFor(
      async () => (await publishedEntries(g)).length >= 1 + actions.length,
      30_000,
      'entries published after the outage',
    );
    const entries = await publishedEntries(g);
    expect(entries).toHaveLength(1 + actions.length);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    expect(entries.slice(1).map((e) => e.action)).toEqual(actions);
    const left = await g.db
      .selectFrom('gateway_outbox' as never)
      .selectAll()
      .execute();
    expect(left).toEqual([]);
  }, 120_000);
});
