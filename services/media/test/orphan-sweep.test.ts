/**
 * The orphan sweep against a real JetStream and PostgreSQL: bytes whose row was never written
 * and chunks of a write that died midway are removed once older than the grace; files with a
 * row and younger leftovers are kept; a bucket mostly unknown to the database is left alone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats, createDb, migrate, type NatsConnection } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { freshDatabase, type TestDatabase, testNatsUrl } from '@switchboard/testkit';
import { uniqueInstanceId } from '@switchboard/testkit/tools';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObjectStoreStorage, mediaBucketName, mediaStreamName } from '../src/adapters/object-store.ts';
import type { MediaStorage } from '../src/adapters/storage.ts';
import type { MediaDatabase } from '../src/db.ts';
import { mediaMigrations } from '../src/migrations/index.ts';
import { insertMediaFile } from '../src/store/media-files.ts';
import { sweepOrphans } from '../src/use-cases/sweep-orphans.ts';

const HOUR = 3_600_000;

let nc: NatsConnection;
let testDb: TestDatabase;
let db: Kysely<MediaDatabase>;

beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'media-orphan-sweep-test');
  testDb = await freshDatabase('media_sweep');
  db = createDb<MediaDatabase>({ url: testDb.url, applicationName: 'media-sweep-test' });
  await migrate(db, 'media', mediaMigrations);
});
afterAll(async () => {
  await db?.destroy();
  await testDb?.drop();
  await nc?.drain();
});

/** A bucket of its own for each test, so what a sweep counts is that test's alone. */
async function freshBucket(): Promise<{ bus: Bus; storage: MediaStorage }> {
  const bus = await createBus(nc, instanceId(uniqueInstanceId('sweep')));
  return { bus, storage: await createObjectStoreStorage({ bus, nc, replicas: 1 }) };
}

/** Bytes stored under a new key, as an upload stores them before its row is written. */
async function stored(
  storage: MediaStorage,
  bytes = randomBytes(300_000),
): Promise<{ key: string; sha256: string; size: number }> {
  const key = randomUUID();
  const { sha256, size } = await storage.put(key, Readable.from([bytes]));
  return { key, sha256, size };
}

/** A file's row referring to `key`, as a finished upload writes it. */
async function rowFor(object: { key: string; sha256: string; size: number }): Promise<void> {
  await insertMediaFile(db, {
    id: randomUUID(),
    objectKey: object.key,
    sha256: object.sha256,
    size: object.size,
    mimeType: 'application/pdf',
    fileName: 'kept.pdf',
    origin: 'upload',
    createdBy: 1,
  });
}

/** Chunks of a write that died before its description: what a crash in the middle of `put` leaves. */
async function unfinishedWrite(bus: Bus): Promise<string> {
  const subject = `$O.${mediaBucketName(bus.instance)}.C.${randomBytes(16).toString('hex')}`;
  const js = jetstream(nc);
  await js.publish(subject, randomBytes(1_000));
  await js.publish(subject, randomBytes(1_000));
  return subject;
}

async function chunkCount(bus: Bus, subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(mediaStreamName(bus.instance), { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

async function readBack(storage: MediaStorage, key: string): Promise<Buffer | undefined> {
  const stream = await storage.read(key);
  if (!stream) return undefined;
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** An hour and a second from now: everything stored by then is older than an hour's grace. */
const anHourOn = () => new Date(Date.now() + HOUR + 1_000);

describe('orphan sweep', () => {
  it('keeps everything younger than the grace, however orphaned', async () => {
    const { bus, storage } = await freshBucket();
    const orphan = await stored(storage);
    const dead = await unfinishedWrite(bus);
    await expect(sweepOrphans({ db, storage }, HOUR)).resolves.toEqual({ orphans: 0, unfinished: 0 });
    expect(await readBack(storage, orphan.key)).toBeDefined();
    expect(await chunkCount(bus, dead)).toBe(2);
  });

  it('removes bytes no file refers to and chunks of a write that never finished, once older than the grace', async () => {
    const { bus, storage } = await freshBucket();
    const bytes = randomBytes(700_000);
    const kept = await stored(storage, bytes);
    await rowFor(kept);
    const orphan = await stored(storage);
    const dead = await unfinishedWrite(bus);

    await expect(sweepOrphans({ db, storage }, HOUR, anHourOn())).resolves.toEqual({
      orphans: 1,
      unfinished: 1,
    });
    expect(await readBack(storage, orphan.key)).toBeUndefined();
    expect(await chunkCount(bus, dead)).toBe(0);
    // The file with a row keeps every byte: its chunks are as old, but its description names them.
    expect((await readBack(storage, kept.key))?.equals(bytes)).toBe(true);
    expect((await storage.inventory()).objects.map((o) => o.key)).toEqual([kept.key]);

    // Nothing is left to sweep, and sweeping again is harmless.
    await expect(sweepOrphans({ db, storage }, HOUR, anHourOn())).resolves.toEqual({
      orphans: 0,
      unfinished: 0,
    });
    expect((await readBack(storage, kept.key))?.equals(bytes)).toBe(true);
  });

  it('removes nothing when most of the bucket has no file in the database (the wrong database)', async () => {
    const { storage } = await freshBucket();
    const objects = await Promise.all(Array.from({ length: 12 }, () => stored(storage, randomBytes(1_000))));
    await rowFor(objects[0] ?? (await stored(storage)));
    await expect(sweepOrphans({ db, storage }, HOUR, anHourOn())).rejects.toThrow(
      '11 of 12 stored objects have no file in this database',
    );
    expect((await storage.inventory()).objects.length).toBe(12);
  });

  it('removes the few orphans of a small bucket, even when they are most of it', async () => {
    const { storage } = await freshBucket();
    const objects = await Promise.all(Array.from({ length: 12 }, () => stored(storage, randomBytes(1_000))));
    const [first, second] = objects;
    if (!first || !second) throw new Error('nothing stored');
    await rowFor(first);
    await rowFor(second);
    // Ten of twelve: over half, but no more than a few crashes leave.
    await expect(sweepOrphans({ db, storage }, HOUR, anHourOn())).resolves.toEqual({
      orphans: 10,
      unfinished: 0,
    });
    expect((await storage.inventory()).objects.map((o) => o.key).sort()).toEqual(
      [first.key, second.key].sort(),
    );
  });

  it('removes nothing when the database holds no file at all (a fresh or wrong database)', async () => {
    const { storage } = await freshBucket();
    const empty = await freshDatabase('media_sweep_empty');
    const emptyDb = createDb<MediaDatabase>({ url: empty.url, applicationName: 'media-sweep-empty-test' });
    try {
      await migrate(emptyDb, 'media', mediaMigrations);
      const lone = await stored(storage, randomBytes(1_000));
      await expect(sweepOrphans({ db: emptyDb, storage }, HOUR, anHourOn())).rejects.toThrow(
        '1 of 1 stored objects have no file in this database',
      );
      expect((await storage.inventory()).objects.map((o) => o.key)).toEqual([lone.key]);
    } finally {
      await emptyDb.destroy();
      await empty.drop();
    }
  });
});
