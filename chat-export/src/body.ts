import { LANGUAGES } from './languages.ts';
import { asciiDigits, cleanInline, stripLeadingMarks } from './normalize.ts';
import type { ExportMedia, MediaKind, SystemKind } from './types.ts';

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const tables = Object.values(LANGUAGES);
const all = <T>(pick: (table: (typeof tables)[number]) => readonly T[]): T[] => tables.flatMap(pick);
/** Persian text is written with and without zero-width non-joiners; compare without them. */
const fold = (text: string): string => {
  const clean = cleanInline(text);
  return (clean.includes('\u200C') ? clean.replace(/\u200C/g, '') : clean).trim();
};
const alternation = (items: readonly string[]): string =>
  [...new Set(items.map(fold))]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegex)
    .join('|');

const ENCRYPTION = new RegExp(`^(?:${alternation(all((t) => t.encryption))})`, 'iu');
const SECURITY = new RegExp(`^(?:${all((t) => t.securityCode).join('|')})`, 'iu');
const NUMBER_CHANGE = new RegExp(`^(?:${all((t) => t.numberChange).join('|')})`, 'iu');
const MEMBERSHIP = new RegExp(`^(?:${all((t) => t.membership).join('|')})`, 'iu');
const MISSED = new RegExp(`^(?:${alternation(all((t) => t.missedCall))})`, 'iu');
const MEDIA_OMITTED = new RegExp(`^(?:${alternation(all((t) => t.mediaOmitted))})$`, 'iu');
const ATTACHED = new RegExp(`^([^\\n]*?) ?<(?:${alternation(all((t) => t.attached))}) ?: ([^>\\n]+)>`, 'u');
const FILE_ATTACHED = new RegExp(`^([^\\n]+?) \\((?:${alternation(all((t) => t.fileAttached))})\\)$`, 'u');

/** iOS placeholders by their lower-case words: matched at the end of the first line, no scanning. */
const OMITTED: readonly { readonly kind: MediaKind; readonly words: string }[] = (
  ['image', 'video', 'audio', 'sticker', 'gif', 'contact', 'document'] as const
).flatMap((kind) =>
  [...new Set(all((t) => t.omitted[kind] ?? []).map((w) => fold(w).toLowerCase()))].map((words) => ({
    kind,
    words,
  })),
);
const DELETED_BODIES = new Set(all((t) => t.deleted).map((w) => fold(w).toLowerCase()));
const DELETED_LENGTHS = [...DELETED_BODIES].map((b) => b.length);
const DELETED_MIN = Math.min(...DELETED_LENGTHS);
const DELETED_MAX = Math.max(...DELETED_LENGTHS) + 1;
/** Last words of the placeholders: a first line ending in none of them is no placeholder (most lines). */
const OMITTED_LAST_WORDS = new Set(OMITTED.map(({ words }) => words.slice(words.lastIndexOf(' ') + 1)));

/**
 * Notices that stand on their own line with no sender (Android) and begin with fixed words, so
 * a `: ` inside them is not taken for a sender's. Checked on every message: prefixes only.
 */
export function standaloneSystemKind(text: string): SystemKind | null {
  const head = fold(text.length > 200 ? text.slice(0, 200) : text);
  if (ENCRYPTION.test(head)) return 'encryption';
  if (SECURITY.test(head)) return 'security_code';
  return null;
}

/** Kind of a line that has no sender (rare lines: the name-first patterns may scan them). */
export function senderlessSystemKind(text: string): SystemKind {
  const folded = fold(text);
  if (ENCRYPTION.test(folded)) return 'encryption';
  if (SECURITY.test(folded)) return 'security_code';
  if (NUMBER_CHANGE.test(folded)) return 'number_change';
  if (MEMBERSHIP.test(folded)) return 'membership';
  return MISSED.test(folded) ? 'missed_call' : 'other';
}

const BY_PREFIX: readonly [RegExp, MediaKind][] = [
  [/(?:^|-)(?:IMG|PHOTO)-/i, 'image'],
  [/(?:^|-)(?:VID|VIDEO)-/i, 'video'],
  [/(?:^|-)(?:AUD|PTT|AUDIO)-/i, 'audio'],
  [/(?:^|-)(?:STK|STICKER)-/i, 'sticker'],
  [/(?:^|-)GIF-/i, 'gif'],
];
const BY_EXTENSION: Readonly<Record<string, MediaKind>> = {
  jpg: 'image',
  jpeg: 'image',
  png: 'image',
  heic: 'image',
  webp: 'sticker',
  mp4: 'video',
  mov: 'video',
  '3gp': 'video',
  opus: 'audio',
  ogg: 'audio',
  m4a: 'audio',
  mp3: 'audio',
  aac: 'audio',
  amr: 'audio',
  wav: 'audio',
  vcf: 'contact',
};

export function mediaKindOfFile(fileName: string): MediaKind {
  for (const [pattern, kind] of BY_PREFIX) if (pattern.test(fileName)) return kind;
  const extension = /\.([A-Za-z0-9]{1,5})$/.exec(fileName)?.[1]?.toLowerCase() ?? '';
  return BY_EXTENSION[extension] ?? 'document';
}

export interface ClassifiedBody {
  readonly text: string;
  readonly edited: boolean;
  readonly media: ExportMedia | null;
  readonly system: SystemKind | null;
}

function omittedPlaceholder(firstLine: string): { kind: MediaKind; description: string } | null {
  if (firstLine.length > 300) return null;
  const lastWord = firstLine.slice(firstLine.lastIndexOf(' ') + 1).toLowerCase();
  if (!OMITTED_LAST_WORDS.has(lastWord)) return null;
  const lower = firstLine.toLowerCase();
  for (const { kind, words } of OMITTED) {
    if (!lower.endsWith(words)) continue;
    if (lower.length === words.length) return { kind, description: '' };
    // Documents keep their name before the placeholder: `Invoice.pdf • 2 pages document omitted`.
    if (kind === 'document' && lower.charAt(lower.length - words.length - 1) === ' ') {
      return { kind, description: firstLine.slice(0, firstLine.length - words.length - 1).trim() };
    }
  }
  return null;
}

/** System notices written under a sender's name (iOS encryption notice, deleted messages, missed calls). */
function attributedSystemKind(firstLine: string): SystemKind | null {
  if (firstLine.length > 400) return null;
  if (firstLine.length >= DELETED_MIN && firstLine.length <= DELETED_MAX) {
    const lower = firstLine.toLowerCase();
    if (DELETED_BODIES.has(lower.endsWith('.') ? lower.slice(0, -1) : lower)) return 'deleted';
  }
  if (MISSED.test(firstLine)) return 'missed_call';
  if (ENCRYPTION.test(firstLine)) return 'encryption';
  if (SECURITY.test(firstLine)) return 'security_code';
  return null;
}

const EDITED = all((t) => t.edited ?? []);

/** The text without the marker the app appends to edited messages, and whether it had one. */
function withoutEditedMarker(body: string): { body: string; edited: boolean } {
  if (!body.endsWith('>')) return { body, edited: false };
  for (const marker of EDITED) {
    if (!body.endsWith(marker)) continue;
    const rest = body.slice(0, body.length - marker.length);
    return { body: rest.replace(/[\s\u200E\u200F]+$/, ''), edited: true };
  }
  return { body, edited: false };
}

/** Tells media lines, placeholders and attributed system notices from text, for a message with a sender. */
export function classifyBody(written: string): ClassifiedBody {
  const { body, edited } = withoutEditedMarker(written);
  return { ...classifyUnedited(body), edited };
}

function classifyUnedited(body: string): Omit<ClassifiedBody, 'edited'> {
  const trimmed = stripLeadingMarks(body);
  const newline = trimmed.indexOf('\n');
  const firstLine = newline === -1 ? trimmed : trimmed.slice(0, newline);
  const rest = newline === -1 ? '' : trimmed.slice(newline + 1);

  if (firstLine.includes('<')) {
    const clean = cleanInline(trimmed);
    const attached = ATTACHED.exec(clean);
    if (attached) {
      const fileName = (attached[2] ?? '').trim();
      const before = (attached[1] ?? '').trim();
      const after = clean.slice(attached[0].length).replace(/^\s+/, '');
      const text = [before, after].filter((part) => part.length > 0).join('\n');
      return { text, media: { fileName, kind: mediaKindOfFile(fileName) }, system: null };
    }
  }
  const cleanFirst = fold(firstLine);
  if (cleanFirst.endsWith(')')) {
    const fileAttached = FILE_ATTACHED.exec(cleanFirst);
    if (fileAttached) {
      const fileName = (fileAttached[1] ?? '').trim();
      return { text: rest, media: { fileName, kind: mediaKindOfFile(fileName) }, system: null };
    }
  }
  if (cleanFirst.startsWith('<') && MEDIA_OMITTED.test(cleanFirst)) {
    return { text: rest, media: { fileName: null, kind: 'unknown' }, system: null };
  }
  const omitted = omittedPlaceholder(cleanFirst);
  if (omitted) {
    const text = [omitted.description, rest].filter((part) => part.length > 0).join('\n');
    return { text, media: { fileName: null, kind: omitted.kind }, system: null };
  }
  const system = newline === -1 ? attributedSystemKind(cleanFirst) : null;
  return { text: system === null ? body : trimmed, media: null, system };
}

/** Digits of a number-shaped sender (`+55 61 8121-3457`, `‪+49 170 1234567‬`), else null. */
export function senderNumber(sender: string): string | null {
  const clean = asciiDigits(cleanInline(sender)).trim();
  if (!/^\+?[\d\s().\-‑–]+$/.test(clean)) return null;
  const digits = clean.replace(/\D/g, '');
  return digits.length >= 7 && digits.length <= 15 ? digits : null;
}

/** The name as the app wrote it, without directional marks and the `~ ` it puts before unsaved names. */
export function cleanSender(sender: string): string {
  return cleanInline(sender).replace(/^~\s*/, '').trim();
}
