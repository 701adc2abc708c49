import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './durations.ts';

/** Parses environment variables once at start-up; a bad value stops the process with every problem listed. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
}

/** A service's `loadConfig`: its environment (the process's unless given) parsed by `schema`. */
export function configLoader<S extends z.ZodType>(schema: S): (env?: NodeJS.ProcessEnv) => z.output<S> {
  return (env = process.env) => parseEnv(schema, env);
}

/** `true`/`false` in any case plus `1`/`0`/`yes`/`no`/`on`/`off`, as operators write them (the spec's overrides use `True`). */
export const envBoolean = z
  .string()
  .trim()
  .pipe(
    z.stringbool({
      truthy: ['true', '1', 'yes', 'on'],
      falsy: ['false', '0', 'no', 'off', ''],
      case: 'insensitive',
    }),
  );

/** Which `X-Forwarded-For` entries to believe: none, or those added by these proxies. */
export type TrustProxy = false | string[];

/** proxy-addr's names for ranges: loopback, link-local, and private (10/8, 172.16/12, 192.168/16, fc00::/7). */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

const NAME_THE_PROXIES =
  'give the addresses of the proxies in front (comma-separated IPs or CIDRs, or loopback, linklocal, uniquelocal)';

function trustProxyOf(v: string, ctx: z.RefinementCtx): TrustProxy {
  const value = v.trim().toLowerCase();
  if (['', 'false', '0', 'no', 'off'].includes(value)) return false;
  if (['true', 'yes', 'on'].includes(value) || /^\d+$/.test(value)) {
    // Trusting every hop believes the left-most entry, which the client writes; a hop count
    // cannot tell a proxy from a client that connects directly (Fastify trusts no hop for it).
    ctx.addIssue({
      code: 'custom',
      message: `${value} would let a client choose its own address (and escape the login limits): ${NAME_THE_PROXIES}`,
    });
    return z.NEVER;
  }
  const entries = value.split(',').map((e) => e.trim());
  const bad = entries.filter((e) => !PROXY_RANGE_NAMES.includes(e) && !isProxyAddress(e));
  if (bad.length) {
    ctx.addIssue({ code: 'custom', message: `not an address: ${bad.join(', ')}; ${NAME_THE_PROXIES}` });
    return z.NEVER;
  }
  return entries;
}

function isProxyAddress(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * `TRUST_PROXY`: `false` (default), or the addresses of the proxies whose `X-Forwarded-For`
 * entries give the client address.
 */
export const envTrustProxy = z.string().default('false').transform(trustProxyOf);

export const envPort = z.coerce.number().int().min(0).max(65535);

function durationMs(v: string, ctx: z.RefinementCtx): number {
  const ms = parseDuration(v);
  if (ms !== undefined) return ms;
  ctx.addIssue({ code: 'custom', message: `expected a duration like 500ms, 5s, 5m, 2h or 5d, got "${v}"` });
  return z.NEVER;
}

/** A duration as operators write it (`500ms`, `5s`, `5m`, `2h`, `5d`, bare milliseconds), in milliseconds. */
export const envDuration = (fallback: string) => z.string().default(fallback).transform(durationMs);

/** The same, or undefined when unset or empty (the caller derives a default). */
export const envOptionalDuration = z
  .string()
  .optional()
  .transform((v, ctx) => (v === undefined || v === '' ? undefined : durationMs(v, ctx)));

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

/** Replicas of JetStream streams the service creates: 3 on a cluster, 1 on a single server. */
export const natsStreamReplicas = z.coerce.number().int().min(1).max(5).default(1);
