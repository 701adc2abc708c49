import { createServer } from 'node:net';

/** A TCP port free on loopback right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (!addr || typeof addr === 'string') return reject(new Error('no port'));
      srv.close(() => resolve(addr.port));
    });
  });
}

/** Polls `check` until it returns true or the deadline passes; `what` is evaluated only on timeout. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string | (() => string),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
