import type { Logger } from '@switchboard/kit';
import type { Kysely } from 'kysely';
import type { MediaStorage } from '../adapters/storage.ts';
import type { MediaDatabase } from '../db.ts';
import { SweepRefusedError, sweepOrphans } from '../use-cases/sweep-orphans.ts';

/** The first sweep waits this long after start: start-up stays quick. */
const FIRST_SWEEP_DELAY_MS = 60_000;

export interface OrphanSweeper {
  /** Stops the schedule; a sweep running finishes first. */
  stop(): Promise<void>;
}

/**
 * Runs `sweepOrphans` every `intervalMs` (0: never). A failed sweep (NATS or the database
 * unavailable) is logged and the next one tries again.
 */
export function startOrphanSweeper(deps: {
  db: Kysely<MediaDatabase>;
  storage: MediaStorage;
  log: Logger;
  intervalMs: number;
  graceMs: number;
}): OrphanSweeper {
  if (deps.intervalMs <= 0) return { stop: async () => undefined };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweepOnce().finally(() => {
        running = undefined;
        schedule(deps.intervalMs);
      });
    }, delayMs);
    timer.unref();
  };

  async function sweepOnce(): Promise<void> {
    try {
      const outcome = await sweepOrphans(deps, deps.graceMs);
      if (outcome.orphans || outcome.unfinished) {
        deps.log.info(outcome, 'media orphan sweep removed bytes no file refers to');
      }
    } catch (err) {
      if (err instanceof SweepRefusedError) deps.log.error({ err }, 'media orphan sweep refused');
      else deps.log.warn({ err }, 'media orphan sweep failed; the next one tries again');
    }
  }
  schedule(FIRST_SWEEP_DELAY_MS);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
