import { createLogger, type Logger } from '@switchboard/kit';
import {
  type NumberBehaviour,
  SandboxConfigSchema,
  type SandboxSettings,
  settingsFromEnv,
} from './config.ts';
import { createSandbox } from './service.ts';
import type { SandboxState } from './store/store.ts';

export { buildSandbox, type SandboxDeps } from './app.ts';
export {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  loadConfig,
  type NumberBehaviour,
  type SandboxSettings,
  type SeedNumber,
  settingsFromEnv,
} from './config.ts';
export { createSandbox, type SandboxService } from './service.ts';
export type { BusinessNumber, Customer, SentMessage, WebhookDelivery } from './store/model.ts';
export { createSandboxState, type NewNumber, type SandboxState } from './store/store.ts';

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
  const sandbox = await createSandbox({
    settings: opts.settings ?? sandboxSettings(),
    log: opts.log ?? createLogger('sandbox', 'silent'),
    ...(opts.random ? { random: opts.random } : {}),
  });
  const { state } = sandbox;
  const host = opts.host ?? '127.0.0.1';
  const port = await sandbox.start({ host, port: opts.port ?? 0 });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const seed = state.seed;
  return {
    url: `http://${urlHost}:${port}`,
    port,
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
    close: () => sandbox.stop(),
  };
}
