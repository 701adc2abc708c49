import {
  type OtlpReceiver,
  receivedWebhookHeaders,
  startOtlpReceiver,
  startReceiver,
  waitFor,
} from '@switchboard/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Inbox, startInbox } from './support/inbox.ts';

let inbox: Inbox;
let otlp: OtlpReceiver;
let admin: string;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  inbox = await startInbox({
    fanout: true,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
  admin = await inbox.login();
});
afterAll(async () => {
  await inbox?.stop();
  await otlp?.close();
});

describe('network webhook → chats → fan-out', () => {
  it('delivers every customer message and status to every webhook, unchanged and signed, in one trace', async () => {
    const receivers = await Promise.all([0, 1].map(() => startReceiver(() => ({ status: 204 }))));
    const secrets: string[] = [];
    for (const r of receivers) {
      const res = await inbox.api('POST', '/api/v1/webhooks/waba/', { token: admin, body: { url: r.url } });
      expect(res.status).toBe(201);
      secrets.push(((await res.json()) as { secret: string }).secret);
    }

    const waId = '491700000099';
    const sent = await inbox.customerSays(waId, {
      type: 'text',
      text: { body: 'fan me out' },
      profile_name: 'Fan',
    });
    await waitFor(
      async () => receivers.every((r) => r.requests.some((g) => g.body.includes(sent.id))),
      30_000,
      'both webhooks received the message',
    );

    // The body is exactly what the network posted to the inbox, byte for byte.
    const posted = (await (
      await fetch(`${inbox.sandbox.url}/sandbox/webhook-deliveries?wamid=${encodeURIComponent(sent.id)}`)
    ).json()) as { deliveries: Array<{ body: string | Record<string, unknown> }> };
    const first = posted.deliveries[0]?.body;
    const networkBody = typeof first === 'string' ? first : JSON.stringify(first);
    receivers.forEach((r, i) => {
      const got = r.requests.find((g) => g.body.includes(sent.id));
      if (!got) throw new Error('not received');
      const headers = receivedWebhookHeaders(got);
      expect(got.body).toBe(networkBody);
      expect(() => new Webhook(secrets[i] ?? '').verify(got.body, headers)).not.toThrow();
      expect(JSON.parse(got.body)).toMatchObject({
        object: 'whatsapp_business_account',
        entry: [{ changes: [{ value: { messages: [{ id: sent.id, text: { body: 'fan me out' } }] } }] }],
      });
    });

    // A reply's statuses reach the webhooks too.
    const reply = await inbox.api('POST', '/api/v1/messages/', {
      token: admin,
      body: { wa_id: waId, type: 'text', text: { body: 'thanks' } },
    });
    expect(reply.status).toBe(202);
    await waitFor(
      async () => receivers.every((r) => r.requests.some((g) => g.body.includes('"status":"read"'))),
      30_000,
      'read status fanned out',
    );

    // One trace: gateway's webhook POST → chats processing → each delivery attempt. Each
    // process exports in its own batches, so wait until one trace holds all of them.
    const instance = inbox.env.INSTANCE_ID;
    const complete = () =>
      otlp.spans
        .filter((s) => s.service === 'switchboard-gateway' && s.name === `send sb.${instance}.waba.inbound`)
        .find((p) => {
          const spans = otlp.spans.filter((s) => s.traceId === p.traceId);
          return (
            // The customer message's trace starts at the gateway (status webhooks continue the
            // trace of the send that caused them, so theirs has a parent).
            spans.some((s) => s.service === 'switchboard-gateway' && s.kind === 2 && !s.parentSpanId) &&
            spans.some((s) => s.service === 'switchboard-chats') &&
            spans.filter((s) => s.service === 'switchboard-fanout' && s.kind === 5).length >= 2
          );
        });
    await waitFor(
      async () => complete() !== undefined,
      20_000,
      'one trace across gateway, chats and fan-out',
    );
    const traceId = complete()?.traceId;
    expect(traceId).toBeDefined();
    const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
    const services = new Set(inTrace.map((s) => s.service));
    // The media service reads only the events of bodies with customers' files (its media-fetch
    // durable): a text never reaches it, so it has no span in this trace.
    const expected = ['switchboard-gateway', 'switchboard-chats', 'switchboard-fanout'];
    for (const service of expected) expect(services).toContain(service);
    expect([...services].filter((s) => !expected.includes(s))).toEqual([]);
    // The HTTP server span; the gateway's request/reply handlers (the fan-out asking for an
    // owner's rights) are SERVER spans too, named `process <subject>`, inside the trace.
    const server = inTrace.find(
      (s) => s.service === 'switchboard-gateway' && s.kind === 2 && !s.name.startsWith('process '),
    );
    expect(server).toBeDefined();
    expect(server?.parentSpanId).toBeUndefined();
    // The fan-out's spans hang below chats' publish of the network event.
    const fanoutRoots = inTrace.filter((s) => s.service === 'switchboard-fanout' && s.kind === 5);
    expect(fanoutRoots.length).toBeGreaterThanOrEqual(2);
    for (const f of fanoutRoots) {
      const parent = inTrace.find((s) => s.spanId === f.parentSpanId);
      expect(parent?.service).toBe('switchboard-chats');
    }
    await Promise.all(receivers.map((r) => r.close()));
  });
});
