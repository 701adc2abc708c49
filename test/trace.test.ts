import { join } from 'node:path';
import {
  freePort,
  freshDatabase,
  repoRoot,
  type ServiceProcess,
  spawnService,
  startOtlpReceiver,
  testNatsUrl,
  uniqueInstanceId,
  waitFor,
} from '@switchboard/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const running: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
});

describe('distributed trace', () => {
  it('one trace spans the gateway HTTP request and the chats consumer in another process', async () => {
    const otlp = await startOtlpReceiver();
    const db = await freshDatabase('trace');
    const port = await freePort();
    const env = {
      DATABASE_URL: db.url,
      NATS_URL: testNatsUrl(),
      INSTANCE_ID: uniqueInstanceId('trace'),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // Nothing is sent in this test; chats needs a network to be configured all the same.
      NETWORK_BASE_URL: 'http://127.0.0.1:9',
      NETWORK_API_KEY: 'unused',
    };
    const gateway = spawnService(join(repoRoot, 'services/gateway/src/main.ts'), {
      ...env,
      PORT: String(port),
      INBOX_SECRET_KEY: 'trace-test-secret-key-0123456789abcdef',
    });
    const chats = spawnService(join(repoRoot, 'services/chats/src/main.ts'), env);
    running.push(gateway, chats);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => (await fetch(`${base}/api/v1/status/health/`)).status === 200,
      30_000,
      () => `gateway health (${gateway.output()})`,
    );

    const res = await fetch(`${base}/api/v1/waba/webhook/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ object: 'whatsapp_business_account', entry: [] }),
    });
    expect(res.status).toBe(200);

    const inbound = `sb.${env.INSTANCE_ID}.waba.inbound`;
    const producerSpan = () =>
      otlp.spans.find((s) => s.service === 'switchboard-gateway' && s.name === `send ${inbound}`);
    // Each process exports its spans in its own batches: wait until all three have arrived.
    await waitFor(
      async () =>
        otlp.spans.some((s) => s.service === 'switchboard-chats' && s.name === `process ${inbound}`) &&
        otlp.spans.some((s) => s.spanId === producerSpan()?.parentSpanId),
      20_000,
      () => `server, producer and consumer spans (${chats.output()})`,
    );
    const producer = producerSpan();
    const consumer = otlp.spans.find(
      (s) => s.service === 'switchboard-chats' && s.name === `process ${inbound}`,
    );
    const server = otlp.spans.find((s) => s.spanId === producer?.parentSpanId);
    expect(server, 'HTTP server span of the gateway').toMatchObject({
      service: 'switchboard-gateway',
      kind: 2,
    });
    expect(producer).toBeDefined();
    expect(consumer).toBeDefined();
    // One trace: HTTP server span → publish span (gateway) → consume span (chats).
    expect(producer?.traceId).toBe(server?.traceId);
    expect(consumer?.traceId).toBe(server?.traceId);
    expect(producer?.parentSpanId).toBe(server?.spanId);
    expect(consumer?.parentSpanId).toBe(producer?.spanId);

    await Promise.all([gateway.stop(), chats.stop()]);
    expect(gateway.child.exitCode).toBe(0);
    expect(chats.child.exitCode).toBe(0);
    await otlp.close();
    await db.drop();
  });
});
