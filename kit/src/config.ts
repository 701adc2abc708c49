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
