import type { NumberBehaviour, SandboxSettings } from '../config.ts';
import { randomSecret } from '../config.ts';
import { defaultTemplates } from '../domain/fixtures/templates.ts';
import { numericId } from '../domain/ids.ts';
import type { Template } from '../domain/wire.ts';
import type { BusinessNumber, Customer } from './model.ts';

export interface NewNumber {
  displayPhoneNumber?: string | undefined;
  phoneNumberId?: string | undefined;
  wabaId?: string | undefined;
  apiKey?: string | undefined;
  webhookSecret?: string | undefined;
  webhookUrl?: string | undefined;
  behaviour?: Partial<NumberBehaviour> | undefined;
  templates?: Template[] | undefined;
}

/** All numbers of the emulated network, in memory: an emulator keeps nothing across restarts. */
export interface SandboxState {
  readonly settings: SandboxSettings;
  /** The number created from the seed settings, if any. */
  readonly seed: BusinessNumber | undefined;
  /** Wall-clock milliseconds, before any number's clock offset. */
  now(): number;
  createNumber(input: NewNumber): BusinessNumber;
  byApiKey(key: string): BusinessNumber | undefined;
  byId(phoneNumberId: string): BusinessNumber | undefined;
  list(): BusinessNumber[];
  /** Gives the number a new API key; the previous one stops working at once. */
  replaceApiKey(number: BusinessNumber, apiKey: string): void;
}

export class DuplicateNumberError extends Error {
  override readonly name = 'DuplicateNumberError';
}

/** The number's own clock: wall time shifted by its offset, so windows can expire on demand. */
export function numberNowMs(state: SandboxState, number: BusinessNumber): number {
  return state.now() + number.clockOffsetMs;
}

export function numberNowSeconds(state: SandboxState, number: BusinessNumber): number {
  return Math.floor(numberNowMs(state, number) / 1000);
}

export function ensureCustomer(number: BusinessNumber, waId: string): Customer {
  let c = number.customers.get(waId);
  if (!c) {
    c = {
      waId,
      profileName: 'Sandbox Customer',
      undeliverable: false,
      neverReads: false,
      blockedBusiness: false,
      lastMessageAt: undefined,
      windowExpiresAt: undefined,
      received: [],
      sent: [],
    };
    number.customers.set(waId, c);
  }
  return c;
}

export function createSandboxState(settings: SandboxSettings, now: () => number = Date.now): SandboxState {
  const byKey = new Map<string, BusinessNumber>();
  const byId = new Map<string, BusinessNumber>();

  function createNumber(input: NewNumber): BusinessNumber {
    const apiKey = input.apiKey ?? randomSecret('sbx_');
    const phoneNumberId = input.phoneNumberId ?? numericId(15);
    if (byKey.has(apiKey)) throw new DuplicateNumberError('This API key already belongs to a number.');
    if (byId.has(phoneNumberId))
      throw new DuplicateNumberError(`Phone number id ${phoneNumberId} already exists.`);
    const number: BusinessNumber = {
      phoneNumberId,
      displayPhoneNumber: input.displayPhoneNumber ?? `1555${numericId(7)}`,
      wabaId: input.wabaId ?? numericId(15),
      apiKey,
      webhookSecret: input.webhookSecret ?? randomSecret('sbxs_'),
      webhook: input.webhookUrl ? { url: input.webhookUrl, headers: {} } : undefined,
      behaviour: {
        ...settings.behaviour,
        ...input.behaviour,
        statusDelaysMs: { ...settings.behaviour.statusDelaysMs, ...input.behaviour?.statusDelaysMs },
      },
      clockOffsetMs: 0,
      templates: input.templates ?? defaultTemplates(),
      customers: new Map(),
      sent: new Map(),
      media: new Map(),
      blockedUsers: new Set(),
      faults: [],
      deliveries: [],
      rate: { windowStartMs: 0, count: 0 },
    };
    byKey.set(apiKey, number);
    byId.set(phoneNumberId, number);
    return number;
  }

  const seed = settings.seed
    ? createNumber({
        displayPhoneNumber: settings.seed.displayPhoneNumber,
        phoneNumberId: settings.seed.phoneNumberId,
        wabaId: settings.seed.wabaId,
        apiKey: settings.seed.apiKey,
        webhookSecret: settings.seed.webhookSecret,
        webhookUrl: settings.seed.webhookUrl,
      })
    : undefined;

  return {
    settings,
    seed,
    now,
    createNumber,
    byApiKey: (key) => byKey.get(key),
    byId: (id) => byId.get(id),
    list: () => [...byId.values()],
    replaceApiKey(number, apiKey) {
      if (byKey.has(apiKey)) throw new DuplicateNumberError('This API key already belongs to a number.');
      byKey.delete(number.apiKey);
      number.apiKey = apiKey;
      byKey.set(apiKey, number);
    },
  };
}
