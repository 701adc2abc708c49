import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { jetstream } from '@nats-io/jetstream';
import { Base64UrlPaddedCodec, type ObjectStore, Objm, setSha256Backend } from '@nats-io/obj';
import type { NatsConnection } from '@switchboard/kit';
import type { InstanceId } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import { Lru } from '../domain/lru.ts';
import type { ByteRange } from '../domain/range.ts';
import type { MediaStorage } from './storage.ts';

/**
 * Bytes per stored chunk: each is one JetStream message, so larger chunks mean fewer round
 * trips, smaller ones less memory per message in the NATS client; capped by the server's
 * max_payload (1 MB by default), less room for headers.
 */
const MAX_CHUNK_BYTES = 512 * 1024;
const HEADER_ROOM = 4 * 1024;
/**
 * Chunk publishes awaiting their acknowledgement at once while writing: the round trips overlap
 * (one at a time, as the library writes, leaves the connection idle most of the time), and what
 * a writer holds stays bounded.
 */
const WRITE_WINDOW = 4;

// The library digests what it reads back (`get`, kept for tools): Node's SHA-256, not its
// portable JavaScript one.
setSha256Backend('native');

/** The instance's bucket: its name carries the instance id, like every stream. */
export function mediaBucketName(instance: InstanceId): string {
  return `media_${instance}`;
}

/**
 * Chunk-sized buffers reused from one write to the next: a chunk's buffer goes back once the
 * server acknowledged it (the client has sent it by then). Writing a large file then allocates
 * a few buffers instead of one per chunk, which would pile up as garbage faster than the
 * collector frees it under load. Keeps at most `keep` idle buffers.
 */
class ChunkPool {
  readonly #free: Buffer[] = [];
  readonly size: number;
  readonly #keep: number;
  constructor(size: number, keep: number) {
    this.size = size;
    this.#keep = keep;
  }
  take(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }
  give(buffer: Buffer): void {
    if (this.#free.length < this.#keep) this.#free.push(buffer);
  }
}

/** A stream copied into pooled chunks of exactly the pool's size (the last one shorter). */
async function* rechunk(
  body: AsyncIterable<Uint8Array>,
  pool: ChunkPool,
): AsyncGenerator<{ data: Buffer; buffer: Buffer }> {
  let buffer: Buffer | undefined;
  let used = 0;
  for await (const piece of body) {
    let offset = 0;
    while (offset < piece.byteLength) {
      buffer ??= pool.take();
      const n = Math.min(pool.size - used, piece.byteLength - offset);
      buffer.set(piece.subarray(offset, offset + n), used);
      used += n;
      offset += n;
      if (used === pool.size) {
        yield { data: buffer, buffer };
        buffer = undefined;
        used = 0;
      }
    }
  }
  if (buffer && used > 0) yield { data: buffer.subarray(0, used), buffer };
  else if (buffer) pool.give(buffer);
}

/**
 * Media bytes in the NATS JetStream Object Store: one bucket per instance, replicated like the
 * instance's streams. Objects are written and read in the object store's own layout (chunks on
 * `$O.<bucket>.C.<nuid>`, the description on `$O.<bucket>.M.<name>`), so the library and the
 * `nats` CLI read them, but with two differences the throughput and the memory need: chunks
 * are published a few at a time instead of one round trip each, and reading pulls one chunk at
 * a time by direct get (the library's `get` pushes the whole object at the reader however slow
 * it is, and creates a consumer per read).
 */
export async function createObjectStoreStorage(opts: {
  bus: Bus;
  /** The bus's connection: the object store speaks JetStream directly. */
  nc: NatsConnection;
  replicas: number;
}): Promise<MediaStorage> {
  const { instance } = opts.bus;
  const { nc } = opts;
  const js = jetstream(nc);
  const bucket = mediaBucketName(instance);
  const store: ObjectStore = await new Objm(js).create(bucket, {
    replicas: opts.replicas,
    description: `media files of inbox instance ${instance}`,
  });
  const stream = `OBJ_${bucket}`;
  const jsm = await js.jetstreamManager();
  const chunkSubject = (nuid: string) => `$O.${bucket}.C.${nuid}`;
  const maxPayload = nc.info?.max_payload ?? MAX_CHUNK_BYTES;
  const chunkBytes = Math.max(64 * 1024, Math.min(MAX_CHUNK_BYTES, maxPayload - HEADER_ROOM));
  const pool = new ChunkPool(chunkBytes, 16);
  // An object never changes once written: where its chunks are is asked once, not per read.
  const layouts = new Lru<string, { nuid: string; chunks: number }>(10_000);

  async function* chunks(nuid: string, total: number, range: ByteRange | undefined): AsyncGenerator<Buffer> {
    let seq = 0;
    let offset = 0;
    for (let i = 0; i < total; i++) {
      const m = await jsm.direct.getMessage(stream, { seq: seq + 1, next_by_subj: chunkSubject(nuid) });
      if (!m) throw new Error(`media object ${nuid}: chunk ${i + 1} of ${total} is missing`);
      seq = m.seq;
      const data = m.data;
      const from = offset;
      offset += data.length;
      if (!range) yield Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      else if (offset > range.start && from <= range.end) {
        const start = Math.max(0, range.start - from);
        const end = Math.min(data.length, range.end - from + 1);
        yield Buffer.from(data.buffer, data.byteOffset + start, end - start);
      }
      if (range && offset > range.end) return;
    }
  }

  return {
    async put(key, body) {
      const nuid = randomBytes(16).toString('hex');
      const subject = chunkSubject(nuid);
      const hash = createHash('sha256');
      const inFlight: Array<{ ack: Promise<unknown>; buffer: Buffer }> = [];
      const settle = async (entry: { ack: Promise<unknown>; buffer: Buffer } | undefined) => {
        if (!entry) return;
        try {
          await entry.ack;
        } finally {
          pool.give(entry.buffer);
        }
      };
      let size = 0;
      let count = 0;
      try {
        for await (const { data, buffer } of rechunk(body, pool)) {
          hash.update(data);
          size += data.length;
          count++;
          inFlight.push({ ack: js.publish(subject, data), buffer });
          if (inFlight.length >= WRITE_WINDOW) await settle(inFlight.shift());
        }
        while (inFlight.length) await settle(inFlight.shift());
        const digest = hash.digest();
        const info = {
          name: key,
          bucket,
          nuid,
          size,
          chunks: count,
          mtime: new Date().toISOString(),
          digest: `SHA-256=${Base64UrlPaddedCodec.encode(digest)}`,
          deleted: false,
          options: { max_chunk_size: chunkBytes },
        };
        await js.publish(`$O.${bucket}.M.${Base64UrlPaddedCodec.encode(key)}`, JSON.stringify(info));
        layouts.set(key, { nuid, chunks: count });
        return { size, sha256: digest.toString('hex') };
      } catch (err) {
        // Buffers still being sent are not given back: the pool never hands out one in use.
        await Promise.allSettled(inFlight.splice(0).map((e) => e.ack));
        await jsm.streams.purge(stream, { filter: subject }).catch(() => undefined);
        throw err;
      }
    },
    async read(key, range) {
      let layout = layouts.get(key);
      if (!layout) {
        const info = await store.info(key);
        if (!info || info.deleted) return undefined;
        layout = { nuid: info.nuid, chunks: info.chunks };
        layouts.set(key, layout);
      }
      return Readable.from(chunks(layout.nuid, layout.chunks, range), { objectMode: false });
    },
    async remove(key) {
      layouts.delete(key);
      await store.delete(key).catch((err: unknown) => {
        if (!(err instanceof Error && /not found/i.test(err.message))) throw err;
      });
    },
  };
}
