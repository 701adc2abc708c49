/**
 * The orphan sweep against a real JetStream and PostgreSQL: bytes whose row was never written
 * and chunks of a write that died midway are removed once older than the grace; files with a
 * row, younger leftovers and writes in progress are kept.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats, createDb, migrate, type NatsConnection } from '@switchboard/kit';
import { instanceId } from '@switchboard/proto';
import { type Bus, createBus } from '@switchboard/proto/bus';
import { freshDatabase, type TestDatabase, testNatsUrl, uniqueInstanceId } from '@switchboard/testkit';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createObjectStoreStorage, mediaBucketName } from '../src/adapters/object-store.ts';
import type { MediaStorage } from '../src/adapters/storage.ts';
import type { MediaDatabase } from '../src/db.ts';
import { mediaMigrations } from '../src/migrations/index.ts';
import { insertMediaFile } from '../src/store/media-files.ts';
import { sweepOrphans } from '../src/use-cases/sweep-orphans.ts';

const HOUR = 3_600_000;

let nc: NatsConnection;
let bus: Bus;
let storage: MediaStorage;
let testDb: TestDatabase;
let db: Kysely<MediaDatabase>;

beforeAll(async () => {
  nc = await connectNats(testNatsUrl(), 'media-orphan-sweep-test');
  bus = await createBus(nc, instanceId(uniqueInstanceId('sweep')));
  storage = await createObjectStoreStorage({ bus, nc, replicas: 1 });
  testDb = await freshDatabase('media_sweep');
  db = createDb<MediaDatabase>({ url: testDb.url, applicationName: 'media-sweep-test' });
  await migrate(db, 'media', mediaMigrations);
});
afterAll(async () => {
  await db?.destroy();
  await testDb?.drop();
  await nc?.drain();
});

const stream = () => `OBJ_${mediaBucketName(bus.instance)}`;

/** Bytes stored under a new key, as an upload stores them before its row is written. */
async function stored(bytes = randomBytes(300_000)): Promise<{ key: string; sha256: string; size: number }> {
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
async function unfinishedWrite(): Promise<string> {
  const subject = `$O.${mediaBucketName(bus.instance)}.C.${randomBytes(16).toString('hex')}`;
  const js = jetstream(nc);
  await js.publish(subject, randomBytes(1_000));
  await js.publish(subject, randomBytes(1_000));
  return subject;
}

async function chunkCount(subject: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream(), { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

async function isStored(key: string): Promise<boolean> {
  return (await storage.read(key)) !== undefined;
}

describe('orphan sweep', () => {
  it('keeps everything younger than the grace, however orphaned', async () => {
    const orphan = await stored();
    const dead = await unfinishedWrite();
    await expect(sweepOrphans({ db, storage }, HOUR)).resolves.toEqual({ orphans: 0, unfinished: 0 });
    expect(await isStored(orphan.key)).toBe(true);
    expect(await chunkCount(dead)).toBe(2);
  });

  it('removes bytes no file refers to and chunks of a write that never finished, once older than the grace', async () => {
    const bytes = randomBytes(700_000);
    const kept = await stored(bytes);
    await rowFor(kept);
    const orphan = await stored();
    const dead = await unfinishedWrite();

    // An hour and a second from now, everything above is older than the hour's grace.
    const later = new Date(Date.now() + HOUR + 1_000);
    const outcome = await sweepOrphans({ db, storage }, HOUR, later);
    // The first test's leftovers are swept too: two orphans and two unfinished writes in all.
    expect(outcome).toEqual({ orphans: 2, unfinished: 2 });

    expect(await isStored(orphan.key)).toBe(false);
    expect(await chunkCount(dead)).toBe(0);
    const read = await storage.read(kept.key);
    const parts: Buffer[] = [];
    for await (const part of read ?? []) parts.push(part as Buffer);
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);

    // Nothing is left to sweep, and sweeping again is harmless.
    await expect(sweepOrphans({ db, storage }, HOUR, later)).resolves.toEqual({ orphans: 0, unfinished: 0 });
    expect(await isStored(kept.key)).toBe(true);
  });

  it('never removes the chunks of a write in progress', async () => {
    const jsm = await jetstreamManager(nc);
    const messages = async () => (await jsm.streams.info(stream())).state.messages;
    const before = await messages();
    const key = randomUUID();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slowBody() {
      yield randomBytes(400_000);
      await gate;
      yield randomBytes(400_000);
    }
    const writing = storage.put(key, slowBody());
    // Its first chunks are stored but not yet described: the sweep must leave them.
    const deadline = Date.now() + 10_000;
    while ((await messages()) < before + 3) {
      if (Date.now() > deadline) throw new Error('the write stored no chunks');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect(sweepOrphans({ db, storage }, HOUR)).resolves.toEqual({ orphans: 0, unfinished: 0 });
    release();
    await writing;
    expect(await isStored(key)).toBe(true);
  });
});
