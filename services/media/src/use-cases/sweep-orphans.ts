import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase } from '../db.ts';
import { objectKeysInUse } from '../store/media-files.ts';

export interface SweepOutcome {
  /** Stored objects no file referred to, removed. */
  orphans: number;
  /** Writes that never finished, their pieces removed. */
  unfinished: number;
}

/** Keys asked about in one query. */
const KEYS_PER_QUERY = 500;

/**
 * Removes what a crash can leave in the storage: the bytes of an upload whose row was never
 * written (the process died between storing them and the insert) and the chunks of a write
 * that never finished. Only what is older than `graceMs` is touched, so uploads running now, and
 * a row about to be written for bytes just stored, are safe; a file's row is written right after
 * its bytes, so a day's grace is far more than any upload needs. Safe to run in several processes
 * at once: removing twice is harmless.
 */
export async function sweepOrphans(
  deps: { db: Kysely<MediaDatabase>; storage: MediaStorage },
  graceMs: number,
  now: Date = new Date(),
): Promise<SweepOutcome> {
  const before = new Date(now.getTime() - graceMs);
  const old = (await deps.storage.list()).filter((o) => o.storedAt < before).map((o) => o.key);
  let orphans = 0;
  for (let i = 0; i < old.length; i += KEYS_PER_QUERY) {
    const keys = old.slice(i, i + KEYS_PER_QUERY);
    const inUse = await objectKeysInUse(deps.db, keys);
    for (const key of keys) {
      if (inUse.has(key)) continue;
      await deps.storage.remove(key);
      orphans++;
    }
  }
  const unfinished = await deps.storage.removeUnfinished(before);
  return { orphans, unfinished };
}
