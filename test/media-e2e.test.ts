import { AckPolicy, DeliverPolicy, type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import {
  instanceId,
  legacyMediaInboundConsumer,
  type MediaFile,
  MediaFileSchema,
  type MessageMedia,
  mediaFetchConsumer,
  type NetworkEvent,
  NetworkEventSchema,
  networkEvent,
  networkMediaEvent,
  streamName,
} from '@switchboard/proto';
import { type Bus, createBus, isNotFound } from '@switchboard/proto/bus';
import { testNatsUrl, waitFor } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiMessage, chatMessages, json } from './support/api.ts';
import { type Inbox, startInboxAsAdmin } from './support/inbox.ts';
import { jpeg, multipart, oggOpus, pdf, png, sha256 } from './support/media-files.ts';

let inbox: Inbox;
let admin: string;
let nc: NatsConnection;
let jsm: JetStreamManager;

let bus: Bus;

beforeAll(async () => {
  // The durable of earlier versions is kept a second after the media service began reading it.
  ({ inbox, admin } = await startInboxAsAdmin({ env: { MEDIA_LEGACY_DURABLE_GRACE: '1s' } }));
  nc = await connectNats(testNatsUrl(), 'media-e2e-test');
  jsm = await jetstreamManager(nc);
  bus = await createBus(nc, instanceId(inbox.env.INSTANCE_ID ?? ''));
});
afterAll(async () => {
  await nc?.close();
  await inbox?.stop();
});

const instance = () => instanceId(inbox.env.INSTANCE_ID ?? '');
const eventsStream = () => streamName(instance(), 'events');

/** The network event on `events.network` whose body names `wamid` (the latest such). */
async function networkEventNaming(wamid: string): Promise<NetworkEvent> {
  const subject = networkEvent.subject(instance());
  const last = (await jsm.streams.info(eventsStream())).state.last_seq;
  for (let seq = last; seq > 0 && seq > last - 200; seq--) {
    const m = await jsm.streams.getMessage(eventsStream(), { seq }).catch(() => undefined);
    if (m?.subject !== subject) continue;
    const event = NetworkEventSchema.parse(m.json());
    if (event.body.includes(wamid)) return event;
  }
  throw new Error(`no network event names ${wamid}`);
}

/** Messages the events stream holds on one subject. */
async function storedOn(subject: string): Promise<number> {
  const info = await jsm.streams.info(eventsStream(), { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

interface Received {
  messages: Array<{
    id: string;
    type: string;
    message: Record<string, { id?: string; link?: string }>;
    media: Array<{ id: string; sha256: string; size: number; mime_type: string }>;
  }>;
}

async function upload(data: Buffer, type: string, filename: string): Promise<MediaFile> {
  const form = multipart({ name: 'file_encoded', filename, type, data });
  const res = await fetch(`${inbox.url}/api/v1/media/`, {
    method: 'POST',
    headers: { authorization: `Token ${admin}`, 'content-type': form.contentType },
    body: form.body,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return MediaFileSchema.parse(await res.json());
}

async function send(body: Record<string, unknown>): Promise<ApiMessage> {
  const res = await inbox.api('POST', '/api/v1/messages/', { token: admin, body });
  expect(res.status, await res.clone().text()).toBe(202);
  return json<ApiMessage>(res);
}

async function received(waId: string): Promise<Received['messages']> {
  const res = await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/received`);
  return ((await res.json()) as Received).messages;
}

/** The first message of `type` the customer received, once there is one. */
async function receivedOfType(waId: string, type: string): Promise<Received['messages'][number]> {
  let got: Received['messages'][number] | undefined;
  await waitFor(
    async () => {
      got = (await received(waId)).find((m) => m.type === type);
      return got !== undefined;
    },
    30_000,
    () => `the customer receiving the ${type} (${inbox.chats.output().slice(-2000)})`,
  );
  if (!got) throw new Error(`no ${type} received`);
  return got;
}

async function messageByWamid(waId: string, wamid: string): Promise<ApiMessage | undefined> {
  return (await chatMessages(inbox, waId, admin)).find((m) => m.wamid === wamid);
}

async function storedMedia(waId: string, wamid: string): Promise<MessageMedia> {
  let media: MessageMedia | null | undefined;
  await waitFor(
    async () => {
      media = (await messageByWamid(waId, wamid))?.media;
      return media !== null && media !== undefined;
    },
    30_000,
    () => `media of ${wamid} (${inbox.media.output().slice(-2000)})`,
  );
  if (!media) throw new Error('no media');
  return media;
}

/** The customer writes, and the inbox has stored it (the care window is open). */
async function customerWrites(waId: string, text: string): Promise<void> {
  const { id } = await inbox.customerSays(waId, { type: 'text', text: { body: text } });
  await waitFor(
    async () => (await messageByWamid(waId, id)) !== undefined,
    30_000,
    () => `${id} stored`,
  );
}

async function bytesOf(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('media between the inbox, its clients and the network', () => {
  it('sends an uploaded image by its inbox link: the customer gets the same bytes', async () => {
    const waId = '4915550100001';
    await customerWrites(waId, 'Send me the photo, please');
    const image = jpeg(200_000);
    const file = await upload(image, 'image/jpeg', 'shelf.jpg');
    const sent = await send({ wa_id: waId, type: 'image', image: { link: file.file, caption: 'The shelf' } });

    const got = await receivedOfType(waId, 'image');
    expect(got?.message.image?.link).toBeUndefined();
    expect(got?.media).toEqual([
      { id: got?.message.image?.id, sha256: sha256(image), size: image.length, mime_type: 'image/jpeg' },
    ]);
    // The inbox keeps the message as the client sent it.
    const stored = await inbox.api('GET', `/api/v1/messages/${sent.id}/`, { token: admin });
    expect(JSON.stringify(await stored.json())).toContain(file.file);
  });

  it('sends a document named by its inbox media id', async () => {
    const waId = '4915550100002';
    await customerWrites(waId, 'The invoice?');
    const doc = pdf('invoice 2031');
    const file = await upload(doc, 'application/pdf', 'invoice.pdf');
    await send({ wa_id: waId, type: 'document', document: { id: file.id, filename: 'invoice.pdf' } });
    await waitFor(
      async () => (await received(waId)).some((m) => m.media[0]?.sha256 === sha256(doc)),
      30_000,
      () => `the customer receiving the document (${inbox.chats.output().slice(-2000)})`,
    );
  });

  it("sends a template whose header image is an inbox link by the network's media id", async () => {
    const waId = '4915550100004';
    const image = png;
    const file = await upload(image, 'image/png', 'sale.png');
    // A template needs no open window; `spring_sale` is the sandbox's template with an image header.
    await send({
      wa_id: waId,
      type: 'template',
      template: {
        name: 'spring_sale',
        language: { code: 'en' },
        components: [
          { type: 'header', parameters: [{ type: 'image', image: { link: file.file } }] },
          { type: 'body', parameters: [{ type: 'text', text: 'tomorrow' }] },
        ],
      },
    });
    const got = await receivedOfType(waId, 'template');
    expect(JSON.stringify(got?.message)).not.toContain(file.file);
    expect(got?.media).toEqual([
      { id: expect.any(String), sha256: sha256(image), size: image.length, mime_type: 'image/png' },
    ]);
  });

  it('fails the send of an inbox media id that does not exist, with the network-style error', async () => {
    const waId = '4915550100003';
    await customerWrites(waId, 'Hello');
    const sent = await send({
      wa_id: waId,
      type: 'image',
      image: { id: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f' },
    });
    let failed: { errors: Array<{ code: number; title: string }> } | undefined;
    await waitFor(
      async () => {
        const res = await inbox.api('GET', `/api/v1/messages/${sent.id}/`, { token: admin });
        failed = (await json<ApiMessage>(res)).waba_statuses.failed as typeof failed;
        return failed !== undefined;
      },
      30_000,
      () => `the send failing (${inbox.chats.output().slice(-2000)})`,
    );
    expect(failed?.errors[0]?.code).toBe(131053);
    expect(failed?.errors[0]?.title).toContain('6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f');
    expect(await received(waId)).toHaveLength(0);
  });

  it.each([
    [
      'an image',
      'image',
      { image: { mime_type: 'image/png', data_base64: png.toString('base64') } },
      png,
      'image/png',
    ],
    [
      'a voice note',
      'audio',
      {
        audio: { mime_type: 'audio/ogg; codecs=opus', data_base64: oggOpus.toString('base64'), voice: true },
      },
      oggOpus,
      'audio/ogg',
    ],
    [
      'a PDF',
      'document',
      {
        document: {
          mime_type: 'application/pdf',
          data_base64: pdf('from the customer').toString('base64'),
          filename: 'order.pdf',
        },
      },
      pdf('from the customer'),
      'application/pdf',
    ],
  ])('stores %s a customer sends, readable from the Message', async (_what, type, content, bytes, mime) => {
    const waId = `49155501002${type.length}`;
    const { id: wamid } = await inbox.customerSays(waId, { type, ...content });
    const media = await storedMedia(waId, wamid);
    expect(media).toMatchObject({
      status: 'stored',
      sha256: sha256(bytes),
      size: bytes.length,
      mime_type: mime,
    });
    expect((await bytesOf(media.file ?? '')).equals(bytes)).toBe(true);
  });

  it('stores a customer file after the network failed the download three times', async () => {
    const waId = '4915550100031';
    const faults = await fetch(`${inbox.sandbox.url}/sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 3, status: 503, only: 'media_download' }),
    });
    expect(faults.status).toBe(200);
    const image = jpeg(50_000);
    const { id: wamid } = await inbox.customerSays(waId, {
      type: 'image',
      image: { mime_type: 'image/jpeg', data_base64: image.toString('base64') },
    });
    const media = await storedMedia(waId, wamid);
    expect(media.status).toBe('stored');
    expect((await bytesOf(media.file ?? '')).equals(image)).toBe(true);
    const left = (await (await fetch(`${inbox.sandbox.url}/sandbox/faults`)).json()) as { faults: unknown[] };
    expect(left.faults).toEqual([]);
  });

  it("hands the media service only the bodies with customers' files, once each", async () => {
    const waId = '4915550100051';
    const network = networkEvent.subject(instance());
    const media = networkMediaEvent.subject(instance());
    const [networkBefore, mediaBefore] = [await storedOn(network), await storedOn(media)];
    await customerWrites(waId, 'a text first');
    const { id: wamid } = await inbox.customerSays(waId, {
      type: 'image',
      image: { mime_type: 'image/png', data_base64: png.toString('base64') },
    });
    expect((await storedMedia(waId, wamid)).status).toBe('stored');
    // The text and the image are network events; only the image is the media service's.
    expect(await storedOn(network)).toBeGreaterThanOrEqual(networkBefore + 2);
    expect(await storedOn(media)).toBe(mediaBefore + 1);
    const info = await jsm.consumers.info(eventsStream(), mediaFetchConsumer.durable);
    expect(info.config.filter_subject).toBe(media);
  });

  it('forwards a body with files that only reached the durable of earlier versions, then retires that durable', async () => {
    const waId = '4915550100061';
    await inbox.media.stop();
    // The durable an earlier media service read: every network event, from now on.
    await jsm.consumers.add(eventsStream(), {
      durable_name: legacyMediaInboundConsumer.durable,
      filter_subject: networkEvent.subject(instance()),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      ack_wait: 30_000_000_000,
      max_ack_pending: 1_000,
    });
    const mediaSubject = networkMediaEvent.subject(instance());
    const copiesBefore = await storedOn(mediaSubject);
    const { id: wamid } = await inbox.customerSays(waId, {
      type: 'image',
      image: { mime_type: 'image/jpeg', data_base64: jpeg(2_000).toString('base64') },
    });
    // chats stores the body, then publishes both events: wait for both before removing the copy.
    await waitFor(
      async () =>
        (await messageByWamid(waId, wamid)) !== undefined &&
        (await storedOn(mediaSubject)) === copiesBefore + 1 &&
        (await networkEventNaming(wamid).then(
          () => true,
          () => false,
        )),
      30_000,
      'image stored and both its events published',
    );
    // As an earlier chats would have left it: the body on events.network alone. Its copies on
    // events.network_media go, and the body is published once more under an id of its own
    // (that copy's id was taken by the one removed).
    await jsm.streams.purge(eventsStream(), { filter: mediaSubject });
    const stored = await networkEventNaming(wamid);
    await bus.publish(networkEvent, { ...stored, event_id: `earlier-${stored.event_id}` });
    expect((await messageByWamid(waId, wamid))?.media).toBeNull();

    await inbox.restartMedia();
    expect((await storedMedia(waId, wamid)).status).toBe('stored');
    await waitFor(
      async () =>
        jsm.consumers.info(eventsStream(), legacyMediaInboundConsumer.durable).then(
          () => false,
          (err: unknown) => isNotFound(err),
        ),
      30_000,
      () => `the earlier durable retired (${inbox.media.output().slice(-2000)})`,
    );
  });

  // Runs last: it stops the media service.
  it('answers 503 naming the media service while it is down, and records a file the network no longer has as failed', async () => {
    const waId = '4915550100041';
    await inbox.media.stop();
    const upload = await fetch(`${inbox.url}/api/v1/media/`, {
      method: 'POST',
      headers: { authorization: `Token ${admin}`, 'content-type': 'image/png' },
      body: png,
    });
    expect(upload.status).toBe(503);
    expect(await upload.json()).toMatchObject({ code: 'service_unavailable', dependency: 'media' });
    const read = await fetch(`${inbox.url}/api/v1/media/0b5f8a2e-3c1d-4e6f-9a7b-8c9d0e1f2a3b/`);
    expect(read.status).toBe(503);

    // While the media service is down the customer's photo is stored without its file, and the
    // network forgets the file before the media service comes back.
    const sent = await fetch(`${inbox.sandbox.url}/sandbox/customers/${waId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'image' }),
    });
    const { id: wamid, media_id } = (await sent.json()) as { id: string; media_id: string };
    await waitFor(async () => (await messageByWamid(waId, wamid)) !== undefined, 30_000, 'message stored');
    expect((await messageByWamid(waId, wamid))?.media).toBeNull();
    const gone = await fetch(`${inbox.sandbox.url}/${media_id}`, {
      method: 'DELETE',
      headers: { 'D360-API-KEY': inbox.env.NETWORK_API_KEY ?? '' },
    });
    expect(gone.status).toBe(200);

    await inbox.restartMedia();
    const media = await storedMedia(waId, wamid);
    expect(media).toMatchObject({ status: 'failed', id: null, file: null });
    expect(media.error?.code).toBe(100);
  });
});
