/**
 * The object-store storage against a real JetStream: what it writes the library reads, what the
 * library writes it reads, a reader that did not write the object (no layout in memory) reads
 * it whole and in slices by the recorded chunk sequence numbers, files written side by side
 * read back exactly, and a failed write leaves nothing.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type ObjectStore, Objm } from '@nats-io/obj';
import { connectNats, type NatsConnection } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObjectStoreStorage, mediaBucketName, mediaStreamName } from '../src/adapters/object-store.ts';
import type { MediaStorage } from '../src/adapters/storage.ts';
import type { ByteRange } from '../src/domain/range.ts';

let nc: NatsConnection;
let bus: Bus;
let store: ObjectStore;
/** Objects are written through this one… */
let writer: MediaStorage;

beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'media-object-store-test');
  bus = await createBus(nc, instanceId(uniqueInstanceId('obj')));
  writer = await createObjectStoreStorage({ bus, nc, replicas: 1 });
  store = await new Objm(jetstream(nc)).open(mediaBucketName(bus.instance));
});
afterAll(async () => {
  await nc?.drain();
});

/** …and read through a new one, which knows of them only what the stream holds. */
const freshReader = () => createObjectStoreStorage({ bus, nc, replicas: 1 });

/** 64 KB pieces, as an HTTP body arrives. */
const body = (bytes: Buffer) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) =>
      bytes.subarray(i * 65_536, (i + 1) * 65_536),
    ),
  );

async function readAll(storage: MediaStorage, key: string, range?: ByteRange): Promise<Buffer> {
  const stream = await storage.read(key, range);
  if (!stream) throw new Error(`${key} is not stored`);
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const SIZE = 1_300_000;
/** Slices inside a chunk, across one or several chunk boundaries (128 KB, 100,000 bytes), and the ends. */
const ranges: ByteRange[] = [
  { start: 0, end: 0 },
  { start: 10, end: 99_999 },
  { start: 99_990, end: 100_010 },
  { start: 524_000, end: 525_000 },
  { start: 500_000, end: 1_100_000 },
  { start: 1_048_570, end: 1_048_580 },
  { start: SIZE - 10, end: SIZE - 1 },
  { start: 0, end: SIZE - 1 },
];

async function expectReadsBack(storage: MediaStorage, key: string, bytes: Buffer): Promise<void> {
  expect((await readAll(storage, key)).equals(bytes)).toBe(true);
  for (const range of ranges) {
    const got = await readAll(storage, key, range);
    expect([range, got.equals(bytes.subarray(range.start, range.end + 1))]).toEqual([range, true]);
  }
}

describe('object-store storage', () => {
  it('answers the size and SHA-256 of what it stored, and a new reader reads it whole and in slices', async () => {
    const bytes = randomBytes(SIZE);
    const key = randomUUID();
    await expect(writer.put(key, body(bytes))).resolves.toEqual({
      size: SIZE,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    await expectReadsBack(writer, key, bytes);
    await expectReadsBack(await freshReader(), key, bytes);
  });

  it('writes in the object store layout: the library reads the object and finds its chunks numbered', async () => {
    const bytes = randomBytes(SIZE);
    const key = randomUUID();
    await writer.put(key, body(bytes));
    const info = await store.info(key);
    expect(info).toMatchObject({ size: SIZE, chunks: Math.ceil(SIZE / (128 * 1024)), deleted: false });
    expect(info?.metadata?.['chunk-seqs']).toMatch(/^\d+(-\d+)?(,\d+(-\d+)?)*$/);
    const got = await store.get(key);
    if (!got) throw new Error('the library found no object');
    const parts: Uint8Array[] = [];
    for await (const part of got.data) parts.push(part);
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
    // The library checks the digest it reads against the one described.
    await expect(got.error).resolves.toBeFalsy();
  });

  it('reads an object the library wrote (other chunk size, no numbers recorded), whole and in slices', async () => {
    const bytes = randomBytes(SIZE);
    const key = randomUUID();
    await store.put(
      { name: key, options: { max_chunk_size: 100_000 } },
      Readable.toWeb(body(bytes)) as never,
    );
    await expectReadsBack(await freshReader(), key, bytes);
  });

  it('reads back files written side by side, whose chunks interleave in the stream', async () => {
    const files = Array.from({ length: 3 }, () => ({ key: randomUUID(), bytes: randomBytes(SIZE) }));
    await Promise.all(files.map((f) => writer.put(f.key, body(f.bytes))));
    const reader = await freshReader();
    for (const f of files) await expectReadsBack(reader, f.key, f.bytes);
  });

  it('leaves neither chunks nor a description when the body fails midway', async () => {
    const jsm = await jetstreamManager(nc);
    const stream = mediaStreamName(bus.instance);
    const before = (await jsm.streams.info(stream)).state.messages;
    const key = randomUUID();
    async function* failing() {
      yield randomBytes(1_200_000);
      throw new Error('the client went away');
    }
    await expect(writer.put(key, Readable.from(failing()))).rejects.toThrow('the client went away');
    expect((await jsm.streams.info(stream)).state.messages).toBe(before);
    expect(await store.info(key)).toBeNull();
    expect(await (await freshReader()).read(key)).toBeUndefined();
  });
});
