import type { HttpServer, Logger } from '@switchboard/kit';
import { buildSandbox } from './app.ts';
import type { SandboxSettings } from './config.ts';
import { createSandboxState, type SandboxState } from './store/store.ts';

export interface SandboxService {
  app: HttpServer;
  state: SandboxState;
  /** Listens; answers the port it got (0 asks for a free one). */
  start(listen: { host: string; port: number }): Promise<number>;
  /** Stops listening and every pending timer (status and webhook schedules). */
  stop(): Promise<void>;
}

/** The composition root: the network's state and the app on it; nothing listens before `start()`. */
export async function createSandbox(deps: {
  settings: SandboxSettings;
  log: Logger;
  random?: () => number;
}): Promise<SandboxService> {
  const state = createSandboxState(deps.settings);
  const app = await buildSandbox({ log: deps.log, state, ...(deps.random ? { random: deps.random } : {}) });
  return {
    app,
    state,
    async start(listen) {
      await app.listen(listen);
      const address = app.server.address();
      if (!address || typeof address === 'string')
        throw new Error('the sandbox is not listening on a TCP port');
      return address.port;
    },
    stop: () => app.close(),
  };
}
