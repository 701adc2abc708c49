import { createHash } from 'node:crypto';
import { waitFor } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { INBOUND_MESSAGE_TYPES, type InboundMessage } from '../src/domain/wire.ts';
import {
  call,
  customerSays,
  expectedSignature,
  newCustomer,
  type ReceivedWebhook,
  sandboxRig,
  seedOf,
} from './helpers.ts';

const rig = sandboxRig();

function webhookFor(wamid: string): ReceivedWebhook | undefined {
  return rig.receiver.received.find((r) =>
    r.body.entry.some((e) => e.changes.some((c) => c.value.messages?.some((m) => m.id === wamid))),
  );
}

async function webhookOf(wamid: string): Promise<{ hook: ReceivedWebhook; message: InboundMessage }> {
  await waitFor(async () => webhookFor(wamid) !== undefined, 5_000, `webhook for ${wamid}`);
  const hook = webhookFor(wamid);
  const message = hook?.body.entry[0]?.changes[0]?.value.messages?.[0];
  if (!hook || !message) throw new Error('webhook vanished');
  return { hook, message };
}

describe('customer messages of every inbound type', () => {
  it('posts a signed, schema-valid webhook for each type', async () => {
    const waId = newCustomer();
    const seed = seedOf(rig.sb);
    // A business message first, so replies and reactions have something to point at.
    await customerSays(rig.sb, waId, { type: 'text', profile_name: 'Ana Souza', text: { body: 'hello' } });
    const sent = await rig.client.sendMessage({ to: waId, type: 'text', text: { body: 'How can we help?' } });
    const businessWamid = sent.messages[0]?.id;

    const requests: Record<string, Record<string, unknown>> = {
      text: { type: 'text', text: { body: 'Do you ship to Lisbon?' } },
      image: { type: 'image', image: { caption: 'the broken part' } },
      audio: { type: 'audio' },
      video: { type: 'video', video: { caption: 'unboxing' } },
      document: { type: 'document', document: { filename: 'receipt.pdf' } },
      sticker: { type: 'sticker', sticker: { animated: false } },
      location: { type: 'location' },
      contacts: { type: 'contacts' },
      interactive: { type: 'interactive', interactive: { type: 'list_reply' } },
      button: { type: 'button' },
      reaction: { type: 'reaction', reaction: { emoji: '\u2764\ufe0f' } },
      order: { type: 'order' },
      system: { type: 'system', system: { new_wa_id: '4915199999999' } },
      unsupported: { type: 'unsupported', unsupported: { type: 'poll_creation' } },
      unknown: { type: 'unknown' },
    };
    expect(Object.keys(requests).sort()).toEqual([...INBOUND_MESSAGE_TYPES].sort());

    for (const [type, request] of Object.entries(requests)) {
      const wamid = await customerSays(rig.sb, waId, request);
      const { hook, message } = await webhookOf(wamid);

      expect(hook.signature).toBe(expectedSignature(seed.webhookSecret, hook.raw));
      expect(hook.headers['content-type']).toBe('application/json');
      expect(hook.body.object).toBe('whatsapp_business_account');
      const entry = hook.body.entry[0];
      expect(entry?.id).toBe(seed.wabaId);
      const change = entry?.changes[0];
      expect(change?.field).toBe('messages');
      expect(change?.value.metadata).toEqual({
        display_phone_number: seed.displayPhoneNumber,
        phone_number_id: seed.phoneNumberId,
      });
      if (type === 'system') expect(change?.value.contacts).toBeUndefined();
      else expect(change?.value.contacts).toEqual([{ profile: { name: 'Ana Souza' }, wa_id: waId }]);

      expect(message.type).toBe(type);
      expect(message.from).toBe(waId);
      expect(message.timestamp).toMatch(/^\d+$/);
      expect(Math.abs(Number(message.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    }
    expect(rig.receiver.invalid).toEqual([]);

    const byType = new Map(
      rig.receiver
        .messages()
        .filter((m) => m.from === waId)
        .map((m) => [m.type, m]),
    );
    const reaction = byType.get('reaction');
    expect(reaction?.type === 'reaction' && reaction.reaction).toEqual({
      message_id: businessWamid,
      emoji: '\u2764\ufe0f',
    });
    const button = byType.get('button');
    expect(button?.context).toEqual({ from: seed.displayPhoneNumber, id: businessWamid });
    const list = byType.get('interactive');
    expect(list?.type === 'interactive' && list.interactive.type).toBe('list_reply');
    const system = byType.get('system');
    expect(system?.type === 'system' && system.system).toMatchObject({
      type: 'user_changed_number',
      wa_id: '4915199999999',
    });
    const unsupported = byType.get('unsupported');
    expect(unsupported?.errors?.[0]).toMatchObject({ code: 131051, title: 'Message type unknown' });
    const audio = byType.get('audio');
    expect(audio?.type === 'audio' && audio.audio).toMatchObject({
      mime_type: 'audio/ogg; codecs=opus',
      voice: true,
    });
    const document = byType.get('document');
    expect(document?.type === 'document' && document.document.filename).toBe('receipt.pdf');
  });

  it('serves the media a customer sent through the media endpoints, bytes matching the announced sha256', async () => {
    const waId = newCustomer();
    const bytes = Buffer.from('%PDF-1.4\n% customer upload\n%%EOF\n');
    const wamid = await customerSays(rig.sb, waId, {
      type: 'document',
      document: { data_base64: bytes.toString('base64'), mime_type: 'application/pdf', filename: 'scan.pdf' },
    });
    const { message } = await webhookOf(wamid);
    if (message.type !== 'document') throw new Error('expected a document');
    const info = await rig.client.getMediaUrl(message.document.id);
    expect(info).toMatchObject({
      messaging_product: 'whatsapp',
      id: message.document.id,
      mime_type: 'application/pdf',
      sha256: message.document.sha256,
      file_size: bytes.length,
    });
    const file = await rig.client.downloadMedia(info.url);
    expect(file.data.equals(bytes)).toBe(true);
    expect(file.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(file.contentType).toBe('application/pdf');
  });

  it('keeps profile name, ad referral and reply context in the webhook', async () => {
    const waId = newCustomer();
    const wamid = await customerSays(rig.sb, waId, {
      type: 'text',
      profile_name: 'Kerry',
      text: { body: 'I saw your ad' },
      referral: { headline: 'Spring sale', source_type: 'ad' },
      context: { id: 'wamid.earlier', forwarded: true },
    });
    const { hook, message } = await webhookOf(wamid);
    expect(hook.body.entry[0]?.changes[0]?.value.contacts?.[0]?.profile.name).toBe('Kerry');
    expect(message.referral).toMatchObject({
      headline: 'Spring sale',
      source_type: 'ad',
      source_url: expect.any(String),
    });
    expect(message.context).toEqual({
      from: seedOf(rig.sb).displayPhoneNumber,
      id: 'wamid.earlier',
      forwarded: true,
    });
  });

  it('delivers a backdated message now, with its original timestamp', async () => {
    const waId = newCustomer();
    const then = Math.floor(Date.now() / 1000) - 25 * 3600;
    const wamid = await customerSays(rig.sb, waId, { type: 'text', timestamp: then });
    const { message } = await webhookOf(wamid);
    expect(message.timestamp).toBe(String(then));
    const customer = await call(rig.sb, 'GET', `/sandbox/customers/${waId}`);
    expect(customer.json).toMatchObject({ window_open: false, window_expires_at: then + 24 * 3600 });
  });

  it('drops messages from a customer the business blocked', async () => {
    const waId = newCustomer();
    await customerSays(rig.sb, waId, { type: 'text' });
    const blocked = await rig.client.blockUsers([`+${waId}`]);
    expect(blocked.block_users.added_users).toEqual([{ input: `+${waId}`, wa_id: waId }]);
    const res = await call(rig.sb, 'POST', `/sandbox/customers/${waId}/messages`, { type: 'text' });
    expect(res.json).toMatchObject({ delivered_to_business: false });
    const { id } = z.object({ id: z.string() }).parse(res.json);
    // The sandbox answered synchronously and posted nothing: any webhook would have been queued already.
    const deliveries = await call(
      rig.sb,
      'GET',
      `/sandbox/webhook-deliveries?wamid=${encodeURIComponent(id)}`,
    );
    expect(deliveries.json).toEqual({ deliveries: [] });
    await rig.client.unblockUsers([waId]);
  });

  it('rejects a malformed customer message with a Cloud API error body', async () => {
    const res = await call(rig.sb, 'POST', `/sandbox/customers/${newCustomer()}/messages`, {
      type: 'location',
      location: { latitude: 200, longitude: 0 },
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      error: { code: 131009, type: 'OAuthException', error_data: { details: expect.any(String) } },
    });
  });
});
