import { LANGUAGES } from './languages.ts';
import { asciiDigits, cleanInline, stripLeadingMarks } from './normalize.ts';
import type { ExportMedia, MediaKind, SystemKind } from './types.ts';

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const tables = Object.values(LANGUAGES);
const all = <T>(pick: (table: (typeof tables)[number]) => readonly T[]): T[] => tables.flatMap(pick);
/** Persian text is written with and without zero-width non-joiners; compare without them. */
const fold = (text: string): string =>
  cleanInline(text)
    .replace(/\u200C/g, '')
    .trim();
const alternation = (items: readonly string[]): string =>
  [...new Set(items.map(fold))]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegex)
    .join('|');

const ENCRYPTION = new RegExp(`^(?:${alternation(all((t) => t.encryption))})`, 'iu');
const SECURITY = new RegExp(`^(?:${all((t) => t.securityCode).join('|')})`, 'iu');
const NUMBER_CHANGE = new RegExp(`^(?:${all((t) => t.numberChange).join('|')})`, 'iu');
const MEMBERSHIP = new RegExp(`^(?:${all((t) => t.membership).join('|')})`, 'iu');
const DELETED = new RegExp(`^(?:${alternation(all((t) => t.deleted))})\\.?$`, 'iu');
const MISSED = new RegExp(`^(?:${alternation(all((t) => t.missedCall))})`, 'iu');
const MEDIA_OMITTED = new RegExp(`^(?:${alternation(all((t) => t.mediaOmitted))})$`, 'iu');
const ATTACHED = new RegExp(`^([^\\n]*?) ?<(?:${alternation(all((t) => t.attached))}) ?: ([^>\\n]+)>`, 'u');
const FILE_ATTACHED = new RegExp(`^([^\\n]+?) \\((?:${alternation(all((t) => t.fileAttached))})\\)$`, 'u');

const OMITTED: readonly { readonly kind: MediaKind; readonly pattern: RegExp }[] = (
  ['image', 'video', 'audio', 'sticker', 'gif', 'contact', 'document'] as const
).map((kind) => {
  const words = alternation(all((t) => t.omitted[kind] ?? []));
  // Documents keep their name before the placeholder: `Invoice.pdf • 2 pages document omitted`.
  const source = kind === 'document' ? `^(?:(.*?) )?(?:${words})$` : `^()(?:${words})$`;
  return { kind, pattern: new RegExp(source, 'iu') };
});

/** System notices that stand on their own line with no sender (Android) and may contain `: `. */
export function standaloneSystemKind(text: string): SystemKind | null {
  const folded = fold(text);
  if (ENCRYPTION.test(folded)) return 'encryption';
  if (SECURITY.test(folded)) return 'security_code';
  if (NUMBER_CHANGE.test(folded)) return 'number_change';
  return null;
}

/** Kind of a line that has no sender. */
export function senderlessSystemKind(text: string): SystemKind {
  const folded = fold(text);
  return (
    standaloneSystemKind(text) ??
    (MEMBERSHIP.test(folded) ? 'membership' : MISSED.test(folded) ? 'missed_call' : 'other')
  );
}

/** System notices written under a sender's name (iOS encryption notice, deleted messages, missed calls). */
export function attributedSystemKind(body: string): SystemKind | null {
  if (body.includes('\n')) return null;
  const folded = fold(body);
  if (DELETED.test(folded)) return 'deleted';
  if (MISSED.test(folded)) return 'missed_call';
  if (ENCRYPTION.test(folded)) return 'encryption';
  if (SECURITY.test(folded)) return 'security_code';
  return null;
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
  readonly media: ExportMedia | null;
  readonly system: SystemKind | null;
}

/** Tells media lines, placeholders and attributed system notices from text, for a message with a sender. */
export function classifyBody(body: string): ClassifiedBody {
  const trimmed = stripLeadingMarks(body);
  const newline = trimmed.indexOf('\n');
  const firstLine = newline === -1 ? trimmed : trimmed.slice(0, newline);
  const rest = newline === -1 ? '' : trimmed.slice(newline + 1);
  const cleanFirst = fold(firstLine);

  const attached = ATTACHED.exec(cleanInline(trimmed));
  if (attached) {
    const fileName = (attached[2] ?? '').trim();
    const before = (attached[1] ?? '').trim();
    const after = cleanInline(trimmed).slice(attached[0].length).replace(/^\s+/, '');
    const text = [before, after].filter((part) => part.length > 0).join('\n');
    return { text, media: { fileName, kind: mediaKindOfFile(fileName) }, system: null };
  }
  const fileAttached = FILE_ATTACHED.exec(cleanInline(firstLine));
  if (fileAttached) {
    const fileName = (fileAttached[1] ?? '').trim();
    return { text: rest, media: { fileName, kind: mediaKindOfFile(fileName) }, system: null };
  }
  if (MEDIA_OMITTED.test(cleanFirst))
    return { text: rest, media: { fileName: null, kind: 'unknown' }, system: null };
  for (const { kind, pattern } of OMITTED) {
    const omitted = pattern.exec(cleanFirst);
    if (omitted) {
      const description = (omitted[1] ?? '').trim();
      const text = [description, rest].filter((part) => part.length > 0).join('\n');
      return { text, media: { fileName: null, kind }, system: null };
    }
  }
  const system = attributedSystemKind(trimmed);
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
