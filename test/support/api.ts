import { request as httpRequest } from 'node:http';
import type { MessageMedia } from '@switchboard/proto';
import { waitFor } from '@switchboard/testkit';
import type { Inbox } from './inbox.ts';

/** A response body as the type the test expects of it (the tests check the values themselves). */
export const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;

/** What the tests read of a Message of the inbox API. */
export interface ApiMessage {
  id: string;
  wamid: string | null;
  type: string;
  from_us: boolean;
  waba_payload: Record<string, unknown> & { text?: { body: string } };
  waba_statuses: {
    sent?: number;
    delivered?: number;
    read?: number;
    failed?: { errors: Array<{ code: number }> };
  };
  contact: {
    wa_id: string;
    messaging_window_expires_at: number | null;
    waba_payload: { profile: { name: string } };
  };
  sender: { username: string } | null;
  media: MessageMedia | null;
  timestamp: number;
  before_time: number;
  since_time: number;
}

/** The newest 100 messages of a chat as `token`'s user sees them; none while the chat is unknown. */
export async function chatMessages(inbox: Inbox, waId: string, token: string): Promise<ApiMessage[]> {
  const res = await inbox.api('GET', `/api/v1/messages/?wa_id=${waId}&limit=100`, { token });
  if (res.status !== 200) return [];
  return (await json<{ results: ApiMessage[] }>(res)).results;
}

/** Message `id` of a chat as `token`'s user sees it; undefined while it is not among the newest 100. */
export async function chatMessage(
  inbox: Inbox,
  waId: string,
  token: string,
  id: string,
): Promise<ApiMessage | undefined> {
  return (await chatMessages(inbox, waId, token)).find((m) => m.id === id);
}

/** The network has played a send out to the end: sent, delivered and read. */
export const playedOut = (m: ApiMessage | undefined): boolean =>
  Boolean(m?.waba_statuses.sent && m.waba_statuses.delivered && m.waba_statuses.read);

/**
 * A customer's first text through the network (a chat of its own), once the inbox stored it:
 * what the network sent and the message as `token`'s user reads it.
 */
export async function firstCustomerText(
  inbox: Inbox,
  token: string,
  waId: string,
  text: string,
  profileName: string,
): Promise<{ sent: { id: string }; stored: ApiMessage | undefined }> {
  const sent = await inbox.customerSays(waId, {
    type: 'text',
    text: { body: text },
    profile_name: profileName,
  });
  await waitFor(async () => (await chatMessages(inbox, waId, token)).length === 1, 15_000, 'stored message');
  const [stored] = await chatMessages(inbox, waId, token);
  return { sent, stored };
}

/**
 * A POST the server should refuse by its Content-Length, before reading the body: the headers
 * announce the payload's length and the payload is sent only if no answer comes within 5 s (a
 * server that reads it). Writing it at once raced the refusal: the server closes the connection
 * after answering, and the client's write then failed with EPIPE before the answer was read.
 */
export function postRefusedEarly(
  url: string,
  headers: Record<string, string>,
  payload: string,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        answered = true;
        clearTimeout(unrefused);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 }));
          req.destroy();
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      clearTimeout(unrefused);
      if (!answered) reject(err);
    });
    req.flushHeaders();
    const unrefused = setTimeout(() => req.end(payload), 5_000);
  });
}
