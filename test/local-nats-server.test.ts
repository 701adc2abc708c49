import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsGoMaxProcs, startNatsServer } from '@switchboard/testkit/infra';
import { describe, expect, it } from 'vitest';

describe('the local nats-server', () => {
  it('gets half the cores, at least one, unless GOMAXPROCS is set to a positive whole number', () => {
    expect(natsGoMaxProcs({}, 1)).toBe('1');
    expect(natsGoMaxProcs({}, 2)).toBe('1');
    expect(natsGoMaxProcs({}, 3)).toBe('1');
    expect(natsGoMaxProcs({}, 8)).toBe('4');
    expect(natsGoMaxProcs({ GOMAXPROCS: '3' }, 2)).toBe('3');
    expect(natsGoMaxProcs({ GOMAXPROCS: '' }, 8)).toBe('4');
    // Values Go would ignore (and then take every core) are ignored here too.
    for (const ignored of ['0', '-2', '1.5', 'all'])
      expect(natsGoMaxProcs({ GOMAXPROCS: ignored }, 8)).toBe('4');
  });

  it.runIf(process.platform === 'linux')('runs with that many Go processors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-nats-procs-'));
    const server = await startNatsServer({ storeDir: dir });
    try {
      const environ = (await readFile(`/proc/${server.pid}/environ`, 'utf8')).split('\0');
      expect(environ).toContain(`GOMAXPROCS=${natsGoMaxProcs()}`);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
