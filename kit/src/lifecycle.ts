import type { Logger } from './logger.ts';

export type ShutdownStep = readonly [name: string, run: () => Promise<unknown>];

/**
 * Runs the steps in order on SIGINT/SIGTERM (stop intake first, then drain, then close pools),
 * each bounded by `stepTimeoutMs`, and exits. A second signal exits at once.
 */
export function handleShutdown(log: Logger, steps: readonly ShutdownStep[], stepTimeoutMs = 20_000): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal, exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    let failed = false;
    for (const [name, run] of steps) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          run(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${stepTimeoutMs} ms`)), stepTimeoutMs);
          }),
        ]);
      } catch (err) {
        failed = true;
        log.error({ err, step: name }, 'shutdown step failed');
      } finally {
        clearTimeout(timer);
      }
    }
    log.info('stopped');
    process.exit(failed ? 1 : 0);
  };
  // Started by a supervisor with an IPC channel (npm start): its death means stop too.
  if (process.channel) process.once('disconnect', () => void stop('parent exited'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
