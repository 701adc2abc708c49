import type { MessageMedia } from '@switchboard/proto';
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
