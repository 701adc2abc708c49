import {
  classifyBody,
  cleanSender,
  senderlessSystemKind,
  senderNumber,
  standaloneSystemKind,
} from './body.ts';
import { type DateField, isValidDate, readDateField } from './calendar.ts';
import { decideDateOrder, type NumericDate, readDate } from './date-order.ts';
import { type Header, matchHeader, type ShapeHint } from './header.ts';
import { normalizePrefix, originalIndex } from './normalize.ts';
import type {
  DateOrder,
  DateOrderEvidence,
  ExportMessage,
  LocalDateTime,
  ParseOptions,
  ParseResult,
  SystemKind,
} from './types.ts';

/** Headers are short: the longest (month names, era years, CJK markers, marks) fit in this. */
const HEADER_PREFIX = 96;
/** Another header shape on this share of header lines (and at least twice) means two exports in one text. */
const FOREIGN_SHARE = 0.1;

interface HeaderLine {
  readonly index: number;
  readonly header: Header;
  readonly bodyStart: number;
}

/**
 * Parses the text of an exported chat into messages. Pure: no clock, no I/O; what it cannot
 * decide it returns as a failure (`not_an_export`, `mixed_formats`, `ambiguous_date_order`).
 */
export function parseChatExport(input: string, options: ParseOptions = {}): ParseResult {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const lines = text.split(/\r\n|\n|\r/);
  const hint: ShapeHint = { shape: 0 };

  const candidates: HeaderLine[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    // Most headers are plain ASCII up to the sender: a match on the line as written needs no
    // normalization (which only drops or replaces characters the raw patterns do not accept).
    const plain = matchHeader(line, hint);
    if (plain) {
      candidates.push({ index, header: plain, bodyStart: plain.end });
      continue;
    }
    const prefix = normalizePrefix(line, HEADER_PREFIX);
    if (prefix.sourceIndex === null) continue;
    const header = matchHeader(prefix.text, hint);
    if (header) candidates.push({ index, header, bodyStart: originalIndex(prefix, header.end) });
  }
  const first = candidates[0];
  if (!first)
    return { ok: false, error: 'not_an_export', detail: 'No line starts with a message date and time.' };
  const leading = lines.slice(0, first.index).findIndex((line) => line.trim().length > 0);
  if (leading !== -1) {
    return {
      ok: false,
      error: 'not_an_export',
      detail: `Line ${leading + 1} comes before the first message header.`,
    };
  }

  const signature = first.header.signature;
  const headers = candidates.filter((c) => c.header.signature === signature);
  const foreign = candidates.filter((c) => c.header.signature !== signature);
  if (foreign.length >= 2 && foreign.length >= candidates.length * FOREIGN_SHARE) {
    return {
      ok: false,
      error: 'mixed_formats',
      detail: `Lines ${(foreign[0]?.index ?? 0) + 1} and others use a different header format than line ${first.index + 1}.`,
      lines: foreign.slice(0, 10).map((c) => c.index + 1),
    };
  }

  const bodies = headers.map((h, i) => {
    const next = headers[i + 1]?.index ?? lines.length;
    const firstLine = (lines[h.index] ?? '').slice(h.bodyStart);
    return next - h.index === 1 ? firstLine : [firstLine, ...lines.slice(h.index + 1, next)].join('\n');
  });
  // Trailing empty lines at the end of the file are the file's, not the last message's.
  const lastIndex = bodies.length - 1;
  if (lastIndex >= 0) bodies[lastIndex] = (bodies[lastIndex] ?? '').replace(/\n+$/, '');

  const dates = resolveDates(headers, bodies, options);
  if (!dates.ok) return dates.failure;

  const senders = new Map<string, Sender>();
  const messages: ExportMessage[] = headers.map((h, i) => {
    const local = dates.values[i] ?? dates.values[0];
    if (!local) throw new Error('unreachable: one date per header');
    return buildMessage(h.index + 1, local, bodies[i] ?? '', senders);
  });
  const clock = first.header.time.meridiem === null ? '24h' : '12h';
  return {
    ok: true,
    format: { platform: first.header.platform, dateOrder: dates.order, clock, decidedBy: dates.evidence },
    messages,
  };
}

type ResolvedDates =
  | {
      readonly ok: true;
      readonly values: readonly LocalDateTime[];
      readonly order: DateOrder | null;
      readonly evidence: DateOrderEvidence | null;
    }
  | { readonly ok: false; readonly failure: ParseResult & { ok: false } };

const EMBEDDED = [/-(20\d{2})(\d{2})(\d{2})-WA\d/, /-(20\d{2})-(\d{2})-(\d{2})-\d{2}-\d{2}-\d{2}\./];

function embeddedDate(body: string): string | null {
  const at = body.indexOf('-20');
  if (at === -1 || at > 200) return null;
  for (const pattern of EMBEDDED) {
    const m = pattern.exec(body.slice(0, 200));
    if (m) return `${m[1]}-${m[2]}-${m[3]}`;
  }
  return null;
}

function hour24(h: Header): number {
  const { hour, meridiem } = h.time;
  if (meridiem === 'am') return hour === 12 ? 0 : hour;
  if (meridiem === 'pm') return hour === 12 ? 12 : hour + 12;
  return hour;
}

function resolveDates(
  headers: readonly HeaderLine[],
  bodies: readonly string[],
  options: ParseOptions,
): ResolvedDates {
  const firstHeader = headers[0]?.header;
  if (firstHeader?.date.kind === 'named') return resolveNamedDates(headers, options);

  const numeric: NumericDate[] = [];
  // Exports repeat the same date on many lines: read each written field once.
  const fieldCache = new Map<string, DateField | null>();
  const field = (raw: string): DateField | null => {
    let read = fieldCache.get(raw);
    if (read === undefined) {
      read = readDateField(raw);
      fieldCache.set(raw, read);
    }
    return read;
  };
  for (const [i, h] of headers.entries()) {
    if (h.header.date.kind !== 'numeric') continue;
    const written = h.header.date.fields;
    const a = field(written[0]);
    const b = field(written[1]);
    const c = field(written[2]);
    if (!a || !b || !c) {
      return { ok: false, failure: notAnExport(`Line ${h.index + 1} has a date that is not a date.`) };
    }
    numeric.push({
      fields: [a, b, c],
      secondOfDay: hour24(h.header) * 3600 + h.header.time.minute * 60 + h.header.time.second,
      embedded: embeddedDate(bodies[i] ?? ''),
    });
  }
  const decision = decideDateOrder(numeric, options);
  if (!decision.ok) {
    if (decision.reason === 'ambiguous') {
      return {
        ok: false,
        failure: {
          ok: false,
          error: 'ambiguous_date_order',
          detail: 'The dates read as well day-first as month-first; say which with the device language.',
          readings: decision.readings,
        },
      };
    }
    if (decision.reason === 'inconsistent') {
      const detail = 'The year is first on some lines and last on others.';
      return { ok: false, failure: { ok: false, error: 'mixed_formats', detail, lines: [] } };
    }
    return {
      ok: false,
      failure: notAnExport('No reading of the date fields gives valid dates on every line.'),
    };
  }
  const values = numeric.map((d, i) => {
    const ymd = readDate(d.fields, decision.order);
    const h = headers[i]?.header;
    return at(ymd.year, ymd.month, ymd.day, h);
  });
  return { ok: true, values, order: decision.order, evidence: decision.evidence };
}

const DAY_MS = 86_400_000;

/** Older Android wrote month names, and no year for the current one: the caller says which year that was. */
function resolveNamedDates(headers: readonly HeaderLine[], options: ParseOptions): ResolvedDates {
  const values: LocalDateTime[] = new Array(headers.length);
  let year = options.yearOfLastMessage ?? null;
  let later: { month: number; day: number } | null = null;
  for (let i = headers.length - 1; i >= 0; i--) {
    const h = headers[i];
    if (h?.header.date.kind !== 'named') continue;
    const { month, day, year: written } = h.header.date;
    if (written !== null) year = written;
    else {
      if (year === null) {
        return {
          ok: false,
          failure: notAnExport('The dates carry no year and none was given for the last message.'),
        };
      }
      if (later && (month > later.month || (month === later.month && day > later.day))) year -= 1;
      // The last message cannot lie ahead of the export: a December date exported in February is
      // last December's (a day of slack for the zones).
      if (!later && options.now && Date.UTC(year, month - 1, day) > options.now.getTime() + DAY_MS) year -= 1;
    }
    if (!isValidDate(year ?? 0, month, day)) {
      return { ok: false, failure: notAnExport(`A date that does not exist: ${year}-${month}-${day}.`) };
    }
    later = { month, day };
    values[i] = at(year ?? 0, month, day, h.header);
  }
  return { ok: true, values, order: null, evidence: null };
}

function at(year: number, month: number, day: number, h: Header | undefined): LocalDateTime {
  return {
    year,
    month,
    day,
    hour: h ? hour24(h) : 0,
    minute: h?.time.minute ?? 0,
    second: h?.time.second ?? 0,
  };
}

function notAnExport(detail: string): ParseResult & { ok: false } {
  return { ok: false, error: 'not_an_export', detail };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

export function formatLocal(t: LocalDateTime): string {
  return `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
}

interface Sender {
  readonly name: string;
  readonly number: string | null;
}

function buildMessage(
  line: number,
  local: LocalDateTime,
  rest: string,
  senders: Map<string, Sender>,
): ExportMessage {
  const base = { line, local, localTime: formatLocal(local) };
  const systemOnly = (kind: SystemKind): ExportMessage => ({
    ...base,
    sender: null,
    senderNumber: null,
    text: rest,
    edited: false,
    media: null,
    system: kind,
  });
  const standalone = standaloneSystemKind(rest);
  if (standalone) return systemOnly(standalone);

  const newline = rest.indexOf('\n');
  const firstLine = newline === -1 ? rest : rest.slice(0, newline);
  const colon = firstLine.indexOf(': ');
  let sender: string;
  let body: string;
  if (colon > 0) {
    sender = rest.slice(0, colon);
    body = rest.slice(colon + 2);
  } else if (firstLine.endsWith(':') && firstLine.length > 1) {
    sender = firstLine.slice(0, -1);
    body = newline === -1 ? '' : rest.slice(newline + 1);
  } else {
    return systemOnly(senderlessSystemKind(rest));
  }
  const classified = classifyBody(body);
  let known = senders.get(sender);
  if (!known) {
    const name = cleanSender(sender);
    known = { name, number: senderNumber(name) };
    senders.set(sender, known);
  }
  return {
    ...base,
    sender: known.name,
    senderNumber: known.number,
    text: classified.text,
    edited: classified.edited,
    media: classified.media,
    system: classified.system,
  };
}
