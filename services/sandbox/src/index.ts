import { createLogger, type Logger } from '@switchboard/kit';
import { buildSandbox } from './app.ts';
import {
  type NumberBehaviour,
  SandboxConfigSchema,
  type SandboxSettings,
  settingsFromEnv,
} from './config.ts';
import { createSandboxState, type SandboxState } from './state/store.ts';

export { buildSandbox, type SandboxDeps } from './app.ts';
export {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  loadConfig,
  type NumberBehaviour,
  type SandboxSettings,
  type SeedNumber,
  settingsFromEnv,
} from './config.ts';
export type { BusinessNumber, Customer, SentMessage, WebhookDelivery } from './state/model.ts';
export { createSandboxState, type NewNumber, type SandboxState } from './state/store.ts';

/** Settings as the environment defaults give them (random seed key and secret), with overrides. */
export function sandboxSettings(
  overrides: Partial<Omit<SandboxSettings, 'behaviour'>> & { behaviour?: Partial<NumberBehaviour> } = {},
): SandboxSettings {
  const defaults = settingsFromEnv(SandboxConfigSchema.parse({}));
  const { behaviour, ...rest } = overrides;
  return {
    ...defaults,
    ...rest,
    behaviour: {
      ...defaults.behaviour,
      ...behaviour,
      statusDelaysMs: { ...defaults.behaviour.statusDelaysMs, ...behaviour?.statusDelaysMs },
    },
  };
}

export interface StartSandboxOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  settings?: SandboxSettings;
  log?: Logger;
  random?: () => number;
}

export interface SandboxCredentials {
  readonly phoneNumberId: string;
  readonly displayPhoneNumber: string;
  readonly wabaId: string;
  readonly apiKey: string;
  readonly webhookSecret: string;
}

export interface SandboxHandle {
  /** Base URL of the Cloud API routes and of `/sandbox/` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly state: SandboxState;
  /** The seed number's credentials, when the settings have a seed. */
  readonly seed: SandboxCredentials | undefined;
  close(): Promise<void>;
}

/** Starts a listening sandbox (for tests and `npm start`); `close()` stops it and every pending timer. */
export async function startSandbox(opts: StartSandboxOptions = {}): Promise<SandboxHandle> {
  const settings = opts.settings ?? sandboxSettings();
  const state = createSandboxState(settings);
  const app = await buildSandbox({
    log: opts.log ?? createLogger('sandbox', 'silent'),
    state,
    ...(opts.random ? { random: opts.random } : {}),
  });
  const host = opts.host ?? '127.0.0.1';
  await app.listen({ host, port: opts.port ?? 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('the sandbox is not listening on a TCP port');
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const seed = state.seed;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    state,
    seed: seed
      ? {
          phoneNumberId: seed.phoneNumberId,
          displayPhoneNumber: seed.displayPhoneNumber,
          wabaId: seed.wabaId,
          apiKey: seed.apiKey,
          webhookSecret: seed.webhookSecret,
        }
      : undefined,
    close: () => app.close(),
  };
}
