import { randomUUID } from 'node:crypto';
import { messagesWebhookBody } from '@switchboard/proto';

/**
 * A network-shaped webhook body marked as a test: a text message in the network's
 * `entry[].changes[].value` layout, so a receiver's parser handles it like the real thing,
 * with `test: true` at the top and a wamid that cannot collide with a real one.
 */
export function buildTestEvent(now: Date): { eventId: string; body: string } {
  const eventId = `test-${randomUUID()}`;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const number = { wabaId: '0', displayPhoneNumber: '0', phoneNumberId: '0' };
  const body = {
    ...messagesWebhookBody(number, {
      contacts: [{ profile: { name: 'Switchboard test' }, wa_id: '0' }],
      messages: [
        {
          from: '0',
          id: `wamid.${eventId}`,
          timestamp,
          type: 'text',
          text: { body: 'This is a test event from Switchboard.' },
        },
      ],
    }),
    test: true,
  };
  return { eventId, body: JSON.stringify(body) };
}
