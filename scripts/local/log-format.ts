const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};
const COLORS: Record<string, string> = { ERROR: '\x1b[31m', FATAL: '\x1b[31m', 'WARN ': '\x1b[33m' };
const SKIP = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);

/** Turns one pino JSON line into `12:00:01 INFO  [gateway] message key=value`; other lines pass through. */
export function formatLogLine(service: string, line: string, color: boolean): string {
  let rec: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return `[${service}] ${line}`;
    rec = parsed as Record<string, unknown>;
  } catch {
    return `[${service}] ${line}`;
  }
  const level = LEVELS[Number(rec.level)] ?? 'INFO ';
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 19) : '';
  const extras = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const head = `${time} ${level} [${service}] ${String(rec.msg ?? '')}`;
  const text = extras ? `${head} ${extras}` : head;
  const c = COLORS[level];
  return color && c ? `${c}${text}\x1b[0m` : text;
}
