import { Readable } from 'node:stream';
import { type ObjectStore, Objm, setSha256Backend } from '@nats-io/obj';
import type { Bus, InstanceId } from '@switchboard/proto';
import type { ByteRange } from '../domain/range.ts';
import type { MediaStorage } from './storage.ts';

/**
 * Bytes per stored chunk: each is one JetStream message and one acknowledged round trip when
 * written, so larger chunks write faster; capped by the server's max_payload (1 MB by default).
 */
const CHUNK_BYTES = 512 * 1024;
/** Chunks of one object the reader holds at most: its memory, whatever the file's size. */
const READ_AHEAD_CHUNKS = 4;

// The object store digests every chunk it writes and reads: Node's own SHA-256, not the
// library's portable JavaScript one (several times slower).
setSha256Backend('native');

/** The instance's bucket: its name carries the instance id, like every stream. */
export function mediaBucketName(instance: InstanceId): string {
  return `media_${instance}`;
}

/**
 * Media bytes in the NATS JetStream Object Store: one bucket per instance, replicated like the
 * instance's streams. Writes go chunk by chunk, each acknowledged before the next is read
 * (the library's `put`); reads pull a few chunks at a time through an ordered consumer, so a
 * slow reader holds a few chunks, not the file (the library's `get` pushes the whole object).
 */
export async function createObjectStoreStorage(opts: {
  js: Bus['js'];
  instance: InstanceId;
  replicas: number;
}): Promise<MediaStorage> {
  const bucket = mediaBucketName(opts.instance);
  const store: ObjectStore = await new Objm(opts.js).create(bucket, {
    replicas: opts.replicas,
    description: `media files of inbox instance ${opts.instance}`,
  });
  const stream = `OBJ_${bucket}`;

  async function* chunks(nuid: string, total: number, range: ByteRange | undefined): AsyncGenerator<Buffer> {
    if (total === 0) return;
    const consumer = await opts.js.consumers.get(stream, { filter_subjects: `$O.${bucket}.C.${nuid}` });
    const messages = await consumer.consume({ max_messages: READ_AHEAD_CHUNKS });
    let offset = 0;
    let seen = 0;
    try {
      for await (const m of messages) {
        seen++;
        const data = m.data;
        const from = offset;
        offset += data.length;
        if (!range) yield Buffer.from(data);
        else if (offset > range.start && from <= range.end) {
          const start = Math.max(0, range.start - from);
          const end = Math.min(data.length, range.end - from + 1);
          yield Buffer.from(data.subarray(start, end));
        }
        if (seen >= total || (range && offset > range.end)) break;
      }
    } finally {
      messages.stop();
      await consumer.delete().catch(() => undefined);
    }
  }

  return {
    async put(key, body) {
      const info = await store.put(
        { name: key, options: { max_chunk_size: CHUNK_BYTES } },
        Readable.toWeb(body) as ReadableStream<Uint8Array>,
      );
      return { size: info.size };
    },
    async read(key, range) {
      const info = await store.info(key);
      if (!info || info.deleted) return undefined;
      return Readable.from(chunks(info.nuid, info.chunks, range), { objectMode: false });
    },
    async remove(key) {
      await store.delete(key).catch((err: unknown) => {
        if (!(err instanceof Error && /not found/i.test(err.message))) throw err;
      });
    },
  };
}
