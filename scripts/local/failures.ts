import { StartupError } from '@switchboard/testkit/infra';

/** A URL fit for a log line: the password replaced. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(not a valid URL)';
  }
}

const PERMISSION = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Any error as the one sentence `npm start` prints: a StartupError as it is, a file-system
 * permission problem with its remedy, anything else as its first line (never a stack).
 */
export function oneLine(err: unknown): string {
  if (err instanceof StartupError) return err.message;
  const e = err as NodeJS.ErrnoException | undefined;
  if (e && typeof e === 'object' && e.code && PERMISSION.has(e.code)) {
    const where = e.path ? ` on ${e.path}` : '';
    return `Permission denied${where} (${e.code}); run from a directory you own, or set SWITCHBOARD_HOME to a directory you can write.`;
  }
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split('\n')[0]?.trim() || 'unknown error';
  return /[.!?]$/.test(first) ? first : `${first}.`;
}
