import type { Readable } from 'node:stream';
import type { ByteRange } from '../domain/range.ts';

/**
 * Where the bytes of media files live, by key. Small on purpose, so another store (an
 * S3-compatible one) can stand in for the JetStream Object Store.
 */
export interface MediaStorage {
  /**
   * Stores a stream under a new key, reading it to its end; a stream that fails leaves nothing.
   * Answers the size and the hex SHA-256 of what it stored (computed once, while writing).
   */
  put(key: string, body: AsyncIterable<Uint8Array>): Promise<{ size: number; sha256: string }>;
  /** The bytes, or a slice of them; undefined when nothing is stored under the key. */
  read(key: string, range?: ByteRange): Promise<Readable | undefined>;
  remove(key: string): Promise<void>;
  /** What is stored, read once (for the orphan sweep). */
  inventory(): Promise<StorageInventory>;
}

export interface StorageInventory {
  /** Every stored key, with when its write finished. */
  readonly objects: ReadonlyArray<{ key: string; storedAt: Date }>;
  /**
   * Removes the pieces of writes that never finished (a process that died mid-`put`) and wrote
   * nothing since `before`; answers how many writes it removed.
   */
  removeUnfinished(before: Date): Promise<number>;
}
