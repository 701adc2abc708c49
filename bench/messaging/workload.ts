/**
 * What the messaging benches send and how they read what it cost: the customers, their signed
 * network webhooks, and the CPU time of each process of the inbox.
 */
import { createHmac } from 'node:crypto';
import { messagesWebhookBody } from '@switchboard/proto';
import type { SandboxCredentials } from '@switchboard/sandbox';
import type { LocalInfra } from '@switchboard/testkit/infra';
import type { BenchInbox } from '../inbox-processes.ts';
import { cpuMsOfTrees, ownCpuMs } from '../process-cpu.ts';

/** The benches' customers: request `i` is from or to customer `i % CUSTOMERS`. */
export const CUSTOMERS = 200;

export const customer = (i: number) => `4917${String(i % CUSTOMERS).padStart(8, '0')}`;

/** A network webhook with one text message of customer `i`, named in `contacts` as the network does. */
export function customerWebhook(seed: SandboxCredentials, wamid: string, i: number, ts: number): string {
  const waId = customer(i);
  return JSON.stringify(
    messagesWebhookBody(
      { wabaId: 'bench', displayPhoneNumber: seed.displayPhoneNumber, phoneNumberId: seed.phoneNumberId },
      {
        contacts: [{ profile: { name: `Customer ${i % CUSTOMERS}` }, wa_id: waId }],
        messages: [
          { from: waId, id: wamid, timestamp: String(ts), type: 'text', text: { body: `message ${i}` } },
        ],
      },
    ),
  );
}

/** The headers of a webhook body signed as the network signs it. */
export const signedBy = (secret: string) => (body: string) => ({
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

/**
 * CPU time used so far (ms) by the gateway, chats, nats-server, PostgreSQL with its backends,
 * and this process (the bench's client and the sandbox).
 */
export const inboxCpuReader = (inbox: BenchInbox, infra: LocalInfra) => () => ({
  ...cpuMsOfTrees({
    gateway: inbox.gateway.child.pid,
    chats: inbox.chats.child.pid,
    nats: infra.nats?.pid,
    postgres: infra.postgres?.pid,
  }),
  bench_and_sandbox: ownCpuMs(),
});
