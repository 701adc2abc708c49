/**
 * Per-user webhook endpoints of the chaos run: loopback HTTP servers that answer 200 at once
 * and remember what arrived, by Standard Webhooks `webhook-id` and by the wamids in the body.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Receiver {
  readonly name: string;
  readonly url: string;
  /** Set once the webhook is created: signatures are checked from then on. */
  secret: string | undefined;
  /** Requests received (retries and duplicates included). */
  requests: number;
  /** Arrivals per `webhook-id`. */
  readonly byWebhookId: Map<string, number>;
  /** Inbound message wamids seen, with how many requests carried each. */
  readonly messages: Map<string, number>;
  /** Status updates seen, keyed `wamid:status`. */
  readonly statuses: Map<string, number>;
  badSignatures: number;
  unparsable: number;
  /** Time each wamid arrived first (ms since epoch), for probes. */
  readonly firstSeen: Map<string, number>;
  close(): Promise<void>;
}

interface NetworkBody {
  entry?: Array<{
    changes?: Array<{
      value?: {
        messages?: Array<{ id?: string }>;
        statuses?: Array<{ id?: string; status?: string }>;
      };
    }>;
  }>;
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export async function startReceiver(name: string): Promise<Receiver> {
  let verifier: Webhook | undefined;
  let verifierSecret: string | undefined;
  const receiver: Receiver = {
    name,
    url: '',
    secret: undefined,
    requests: 0,
    byWebhookId: new Map(),
    messages: new Map(),
    statuses: new Map(),
    badSignatures: 0,
    unparsable: 0,
    firstSeen: new Map(),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      receiver.requests++;
      const raw = Buffer.concat(chunks).toString('utf8');
      const header = (h: string) => {
        const v = req.headers[h];
        return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
      };
      const webhookId = header('webhook-id');
      bump(receiver.byWebhookId, webhookId);
      if (receiver.secret) {
        if (verifierSecret !== receiver.secret) {
          verifier = new Webhook(receiver.secret);
          verifierSecret = receiver.secret;
        }
        try {
          verifier?.verify(raw, {
            'webhook-id': webhookId,
            'webhook-timestamp': header('webhook-timestamp'),
            'webhook-signature': header('webhook-signature'),
          });
        } catch {
          receiver.badSignatures++;
        }
      }
      let body: NetworkBody;
      try {
        body = JSON.parse(raw) as NetworkBody;
      } catch {
        receiver.unparsable++;
        return;
      }
      const now = Date.now();
      for (const entry of body.entry ?? []) {
        for (const change of entry.changes ?? []) {
          for (const m of change.value?.messages ?? []) {
            if (!m.id) continue;
            bump(receiver.messages, m.id);
            if (!receiver.firstSeen.has(m.id)) receiver.firstSeen.set(m.id, now);
          }
          for (const s of change.value?.statuses ?? []) {
            if (s.id && s.status) bump(receiver.statuses, `${s.id}:${s.status}`);
          }
        }
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/${name}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
