import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase } from '../db.ts';
import { anyMediaFile, objectKeysInUse } from '../store/media-files.ts';

export interface SweepOutcome {
  /** Stored objects no file referred to, removed. */
  orphans: number;
  /** Writes that never finished, their pieces removed. */
  unfinished: number;
}

/** Keys asked about in one query. */
const KEYS_PER_QUERY = 500;
/**
 * Crashes leave a few orphans; most of the bucket looking orphaned, or a database without a
 * single file, means this process reads another database (a wrong DATABASE_URL, a restore that
 * lost rows). Then nothing is removed.
 */
const MAX_ORPHAN_SHARE = 0.5;
const ORPHANS_ALWAYS_ALLOWED = 10;

/** The sweep found so many orphans that the database, not a crash, is the likelier cause. */
export class SweepRefusedError extends Error {
  override readonly name = 'SweepRefusedError';
}

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
  const inventory = await deps.storage.inventory();
  const old = inventory.objects.filter((o) => o.storedAt < before).map((o) => o.key);
  const orphaned: string[] = [];
  for (let i = 0; i < old.length; i += KEYS_PER_QUERY) {
    const keys = old.slice(i, i + KEYS_PER_QUERY);
    const inUse = await objectKeysInUse(deps.db, keys);
    orphaned.push(...keys.filter((key) => !inUse.has(key)));
  }
  const wrongDatabase =
    (orphaned.length > 0 && !(await anyMediaFile(deps.db))) ||
    (orphaned.length > ORPHANS_ALWAYS_ALLOWED && orphaned.length > old.length * MAX_ORPHAN_SHARE);
  if (wrongDatabase) {
    throw new SweepRefusedError(
      `${orphaned.length} of ${old.length} stored objects have no file in this database: nothing was removed. ` +
        'Check that DATABASE_URL is the instance’s database.',
    );
  }
  for (const key of orphaned) await deps.storage.remove(key);
  const unfinished = await inventory.removeUnfinished(before);
  return { orphans: orphaned.length, unfinished };
}
