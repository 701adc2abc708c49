import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { jetstream, type StoredMsg } from '@nats-io/jetstream';
import { type ObjectStore, Objm, setSha256Backend } from '@nats-io/obj';
import type { NatsConnection } from '@switchboard/kit';
import type { InstanceId } from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import { z } from 'zod';
import { Lru } from '../domain/lru.ts';
import type { ByteRange } from '../domain/range.ts';
import {
  appendChunkSeq,
  type ChunkSeqs,
  chunkSeqsBetween,
  formatChunkSeqs,
  parseChunkSeqs,
} from './chunk-seqs.ts';
import type { MediaStorage } from './storage.ts';
import { youngGarbageCollector } from './young-garbage.ts';

/**
 * Bytes per stored chunk: each is one JetStream message, so larger chunks mean fewer round
 * trips, smaller ones less memory per message in the NATS client; capped by the server's
 * max_payload (1 MB by default), less room for headers.
 */
const MAX_CHUNK_BYTES = 128 * 1024;
const HEADER_ROOM = 4 * 1024;
/**
 * Chunk publishes awaiting their acknowledgement at once while writing: the round trips overlap
 * (one at a time, as the library writes, leaves the connection idle most of the time), and what
 * a writer holds stays bounded.
 */
const WRITE_WINDOW = 4;
/**
 * Bytes a reader asks for ahead of the chunk it hands on: the fetches overlap the client's
 * socket writes (one at a time, the connection to NATS waits on each round trip), and what a
 * reader holds stays bounded (this much, plus the chunk being written to the client). Counted in
 * bytes, not chunks, because objects written with larger chunks (an earlier chunk size, another
 * client) are read too: 16 chunks of today's 128 KB, 4 of 512 KB.
 */
const READ_AHEAD_BYTES = 2 * 1024 * 1024;
/** Chunks in flight for a reader of an object of `chunkBytes` chunks. */
export const readAheadChunks = (chunkBytes: number): number =>
  Math.max(1, Math.floor(READ_AHEAD_BYTES / Math.max(1, chunkBytes)));
/** The key in an object's description (`metadata`) under which its chunks' sequence numbers are kept. */
const CHUNK_SEQS_KEY = 'chunk-seqs';

// The library digests what it reads back (`get`, kept for tools): Node's SHA-256, not its
// portable JavaScript one.
setSha256Backend('native');

/**
 * The object store's names and digests: base64url with its padding kept (the library's codec,
 * done by Node, which is several times quicker than the library's `btoa` over an array).
 */
function base64UrlPadded(bytes: Buffer): string {
  return bytes.toString('base64').replaceAll('+', '-').replaceAll('/', '_');
}

/** The instance's bucket: its name carries the instance id, like every stream. */
export function mediaBucketName(instance: InstanceId): string {
  return `media_${instance}`;
}

/** The stream the bucket's chunks and descriptions are stored in (the object store's naming). */
export function mediaStreamName(instance: InstanceId): string {
  return `OBJ_${mediaBucketName(instance)}`;
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

/** What the sweep needs of an object's description (the object store's `ObjectInfo` JSON). */
const StoredDescriptionSchema = z.looseObject({
  name: z.string(),
  nuid: z.string(),
  deleted: z.boolean().optional(),
});
interface Description {
  key: string;
  nuid: string;
  /** When the server stored the description (the clock chunk times are read on). */
  storedAt: Date;
}

/** Where an object's bytes are: read once, then kept (an object never changes). */
interface Layout {
  nuid: string;
  size: number;
  chunks: number;
  /** The size of every chunk but the last. */
  chunkBytes: number;
  /** The chunks' sequence numbers, when known: reads then fetch ahead and seek. */
  seqs: ChunkSeqs | undefined;
}

/** Whether chunks of `chunkBytes` (the last one shorter) make up the object: then a byte offset names its chunk. */
function evenlyChunked(l: Layout): boolean {
  return l.chunkBytes > 0 && l.size > (l.chunks - 1) * l.chunkBytes && l.size <= l.chunks * l.chunkBytes;
}

/** The part of a chunk starting at byte `from` of the object that a range keeps (all of it without one). */
function slice(data: Uint8Array, from: number, range: ByteRange | undefined): Buffer | undefined {
  const end = from + data.length;
  if (range && (end <= range.start || from > range.end)) return undefined;
  const start = range ? Math.max(0, range.start - from) : 0;
  const stop = range ? Math.min(data.length, range.end - from + 1) : data.length;
  return Buffer.from(data.buffer, data.byteOffset + start, stop - start);
}

/**
 * Media bytes in the NATS JetStream Object Store: one bucket per instance, replicated like the
 * instance's streams. Objects are written and read in the object store's own layout (chunks on
 * `$O.<bucket>.C.<nuid>`, the description on `$O.<bucket>.M.<name>`), so the library and the
 * `nats` CLI read them, but with differences the throughput and the memory need: chunks are
 * published a few at a time instead of one round trip each, their sequence numbers are kept in
 * the description (`metadata`), and reading fetches a few chunks ahead by direct get (the
 * library's `get` pushes the whole object at the reader however slow it is, and creates a
 * consumer per read).
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
  const stream = mediaStreamName(instance);
  const jsm = await js.jetstreamManager();
  const chunkSubject = (nuid: string) => `$O.${bucket}.C.${nuid}`;
  const metaSubject = (key: string) => `$O.${bucket}.M.${base64UrlPadded(Buffer.from(key, 'latin1'))}`;
  const maxPayload = nc.info?.max_payload ?? MAX_CHUNK_BYTES;
  const chunkBytes = Math.max(64 * 1024, Math.min(MAX_CHUNK_BYTES, maxPayload - HEADER_ROOM));
  const pool = new ChunkPool(chunkBytes, 16);
  const moved = youngGarbageCollector();
  // An object never changes once written: where its chunks are is asked once, not per read.
  const layouts = new Lru<string, Layout>(10_000);

  const missing = (nuid: string, i: number, total: number) =>
    new Error(`media object ${nuid}: chunk ${i + 1} of ${total} is missing`);

  /** Chunks `first` to `last` by their sequence numbers, `READ_AHEAD_BYTES` of fetches in flight. */
  async function* readAhead(
    l: Layout,
    seqs: ChunkSeqs,
    range: ByteRange | undefined,
  ): AsyncGenerator<Buffer> {
    const first = range ? Math.floor(range.start / l.chunkBytes) : 0;
    const last = range ? Math.floor(range.end / l.chunkBytes) : l.chunks - 1;
    const wanted = chunkSeqsBetween(seqs, first, last);
    const subject = chunkSubject(l.nuid);
    const inFlight: Array<Promise<StoredMsg | null>> = [];
    const ahead = readAheadChunks(l.chunkBytes);
    let asked = 0;
    const ask = () => {
      const fetch = jsm.direct.getMessage(stream, { seq: wanted[asked++] ?? 0 });
      // A reader that stops early (the client went away) leaves fetches unawaited.
      fetch.catch(() => undefined);
      inFlight.push(fetch);
    };
    while (asked < wanted.length && inFlight.length < ahead) ask();
    for (let i = first; i <= last; i++) {
      const m = await inFlight.shift();
      if (asked < wanted.length) ask();
      if (!m || m.subject !== subject) throw missing(l.nuid, i, l.chunks);
      moved(m.data.length);
      const part = slice(m.data, i * l.chunkBytes, range);
      if (part) yield part;
    }
  }

  /**
   * Chunks found one after the other (`next_by_subj`), for objects whose sequence numbers are
   * not recorded (written by another client); once read whole, they are recorded in memory.
   */
  async function* oneByOne(key: string, l: Layout, range: ByteRange | undefined): AsyncGenerator<Buffer> {
    const subject = chunkSubject(l.nuid);
    const runs: number[] = [];
    let seq = 0;
    let offset = 0;
    for (let i = 0; i < l.chunks; i++) {
      const m = await jsm.direct.getMessage(stream, { seq: seq + 1, next_by_subj: subject });
      if (!m) throw missing(l.nuid, i, l.chunks);
      seq = m.seq;
      appendChunkSeq(runs, seq);
      moved(m.data.length);
      const part = slice(m.data, offset, range);
      offset += m.data.length;
      if (part) yield part;
      if (range && offset > range.end) return;
    }
    layouts.set(key, { ...l, seqs: runs });
  }

  async function layoutOf(key: string): Promise<Layout | undefined> {
    const known = layouts.get(key);
    if (known) return known;
    const info = await store.info(key);
    if (!info || info.deleted) return undefined;
    const layout: Layout = {
      nuid: info.nuid,
      size: info.size,
      chunks: info.chunks,
      chunkBytes: info.options?.max_chunk_size ?? 0,
      seqs: parseChunkSeqs(info.metadata?.[CHUNK_SEQS_KEY], info.chunks),
    };
    layouts.set(key, layout);
    return layout;
  }

  /**
   * Every description in the bucket, read from the stream: one per description subject, each
   * its last message. Not the library's `list`, a watch that ends at its first idle heartbeat:
   * a description missing from a short list would make a live file's chunks look unfinished.
   */
  async function liveDescriptions(): Promise<Description[]> {
    const prefix = metaSubject('');
    const info = await jsm.streams.info(stream, { subjects_filter: `${prefix}*` });
    const found: Description[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const m = await jsm.direct.getMessage(stream, { last_by_subj: subject });
      // Purged since the listing (a write that failed): nothing to describe.
      if (!m) continue;
      // One that cannot be read stops the sweep (it throws): passed over, its file's chunks
      // would look unfinished and be removed.
      const meta = StoredDescriptionSchema.parse(JSON.parse(Buffer.from(m.data).toString('utf8')));
      // A deleted object's tombstone: its chunks are no one's.
      if (meta.deleted) continue;
      found.push({ key: meta.name, nuid: meta.nuid, storedAt: m.time });
    }
    return found;
  }

  return {
    async put(key, body) {
      const nuid = randomBytes(16).toString('hex');
      const subject = chunkSubject(nuid);
      const hash = createHash('sha256');
      const inFlight: Array<{ ack: Promise<{ seq: number }>; buffer: Buffer }> = [];
      const seqs: number[] = [];
      let described: Promise<unknown> | undefined;
      const settle = async (entry: { ack: Promise<{ seq: number }>; buffer: Buffer } | undefined) => {
        if (!entry) return;
        try {
          appendChunkSeq(seqs, (await entry.ack).seq);
        } finally {
          pool.give(entry.buffer);
        }
      };
      let size = 0;
      let count = 0;
      try {
        for await (const { data, buffer } of rechunk(body, pool)) {
          hash.update(data);
          moved(data.length);
          size += data.length;
          count++;
          inFlight.push({ ack: js.publish(subject, data), buffer });
          if (inFlight.length >= WRITE_WINDOW) await settle(inFlight.shift());
        }
        const digest = hash.digest();
        const describe = (metadata: Record<string, string> | undefined) =>
          js.publish(
            metaSubject(key),
            JSON.stringify({
              name: key,
              bucket,
              nuid,
              size,
              chunks: count,
              mtime: new Date().toISOString(),
              digest: `SHA-256=${base64UrlPadded(digest)}`,
              deleted: false,
              options: { max_chunk_size: chunkBytes },
              ...(metadata && { metadata }),
            }),
          );
        if (count <= 1) {
          // One chunk: its description goes out beside it, one round trip for both (a single
          // chunk needs no recorded sequence number to be read at once).
          described = describe(undefined);
          described.catch(() => undefined);
          while (inFlight.length) await settle(inFlight.shift());
          await described;
        } else {
          while (inFlight.length) await settle(inFlight.shift());
          described = describe({ [CHUNK_SEQS_KEY]: formatChunkSeqs(seqs) });
          await described;
        }
        layouts.set(key, { nuid, size, chunks: count, chunkBytes, seqs });
        return { size, sha256: digest.toString('hex') };
      } catch (err) {
        // Buffers still being sent are not given back: the pool never hands out one in use.
        await Promise.allSettled([...inFlight.splice(0).map((e) => e.ack), described]);
        await jsm.streams.purge(stream, { filter: subject }).catch(() => undefined);
        // A description that went out is deleted the object store's way, by a tombstone that
        // replaces it: description subjects are never purged, so a listing paged while this
        // runs cannot skip another one (the orphan sweep relies on seeing every description).
        if (described) await store.delete(key).catch(() => undefined);
        throw err;
      }
    },
    async read(key, range) {
      const layout = await layoutOf(key);
      if (!layout) return undefined;
      const chunks =
        layout.seqs && evenlyChunked(layout)
          ? readAhead(layout, layout.seqs, range)
          : oneByOne(key, layout, range);
      return Readable.from(chunks, { objectMode: false });
    },
    async remove(key) {
      layouts.delete(key);
      await store.delete(key).catch((err: unknown) => {
        if (!(err instanceof Error && /not found/i.test(err.message))) throw err;
      });
    },
    async inventory() {
      const live = await liveDescriptions();
      const described = new Set(live.map((d) => d.nuid));
      return {
        objects: live.map((d) => ({ key: d.key, storedAt: d.storedAt })),
        removeUnfinished: (before) => removeUnfinished(described, before),
      };
    },
  };

  /**
   * A write publishes its chunks, then its description: chunks that no live description names
   * (`described`, read before the chunks are listed) belong to a write still running, one that
   * died, or a delete cut short. Their last chunk's time tells which.
   */
  async function removeUnfinished(described: ReadonlySet<string>, before: Date): Promise<number> {
    const prefix = chunkSubject('');
    const info = await jsm.streams.info(stream, { subjects_filter: `${prefix}*` });
    let removed = 0;
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      if (described.has(subject.slice(prefix.length))) continue;
      const last = await jsm.direct.getMessage(stream, { last_by_subj: subject });
      // Written at or after `before`, or a time that cannot be read: left alone.
      if (!last || !(last.time < before)) continue;
      await jsm.streams.purge(stream, { filter: subject });
      removed++;
    }
    return removed;
  }
}
