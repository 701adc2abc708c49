import { randomUUID } from 'node:crypto';

/**
 * A network-shaped webhook body marked as a test: a text message in the network's
 * `entry[].changes[].value` layout, so a receiver's parser handles it like the real thing,
 * with `test: true` at the top and a wamid that cannot collide with a real one.
 */
export function buildTestEvent(now: Date): { eventId: string; body: string } {
  const eventId = `test-${randomUUID()}`;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const body = {
    object: 'whatsapp_business_account',
    test: true,
    entry: [
      {
        id: '0',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '0', phone_number_id: '0' },
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
            },
          },
        ],
      },
    ],
  };
  return { eventId, body: JSON.stringify(body) };
}
