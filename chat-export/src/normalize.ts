/**
 * Text the app writes around dates and names varies by locale in ways that carry no meaning:
 * directional marks (RLM, LRM, embeddings, isolates), a BOM, exotic spaces, Arabic-Indic
 * digits and the Arabic comma. Header matching works on a normalized copy; `sourceIndex` maps
 * each normalized character back so the message body is taken from the original text.
 */

/** Directional formatting characters and the BOM: dropped. */
const DROPPED = /[\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C]/;
const DROPPED_ALL = /[\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C]/g;
/** Spaces that are not U+0020 (no-break, narrow no-break, thin, figure, …): become U+0020. */
const SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/;
const SPACES_ALL = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
const NEEDS_WORK =
  /[\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C\u00A0\u2000-\u200A\u202F\u205F\u3000\u060C\u0660-\u0669\u06F0-\u06F9]/;

export interface NormalizedPrefix {
  readonly text: string;
  /** `sourceIndex[i]` is the index in the original line of normalized character `i`; one extra entry for the end. */
  readonly sourceIndex: readonly number[] | null;
}

function mapChar(ch: string): string | null {
  if (DROPPED.test(ch)) return null;
  if (SPACES.test(ch)) return ' ';
  const code = ch.charCodeAt(0);
  if (code >= 0x0660 && code <= 0x0669) return String.fromCharCode(48 + code - 0x0660);
  if (code >= 0x06f0 && code <= 0x06f9) return String.fromCharCode(48 + code - 0x06f0);
  if (ch === '\u060C') return ',';
  return ch;
}

/** Normalizes the first `length` characters of a line (headers are short). */
export function normalizePrefix(line: string, length: number): NormalizedPrefix {
  const head = line.length > length ? line.slice(0, length) : line;
  if (!NEEDS_WORK.test(head)) return { text: head, sourceIndex: null };
  let text = '';
  const sourceIndex: number[] = [];
  for (let i = 0; i < head.length; i++) {
    const mapped = mapChar(head.charAt(i));
    if (mapped === null) continue;
    text += mapped;
    sourceIndex.push(i);
  }
  sourceIndex.push(head.length);
  return { text, sourceIndex };
}

/** Index in the original line of normalized position `at`. */
export function originalIndex(prefix: NormalizedPrefix, at: number): number {
  if (prefix.sourceIndex === null) return at;
  return prefix.sourceIndex[at] ?? prefix.sourceIndex[prefix.sourceIndex.length - 1] ?? at;
}

/** Drops directional marks and turns exotic spaces into plain ones (for names and placeholders). */
export function cleanInline(text: string): string {
  return text.replace(DROPPED_ALL, '').replace(SPACES_ALL, ' ');
}

/** Directional marks the app puts before placeholders and attachments (`\u200E<attached: …>`). */
export function stripLeadingMarks(text: string): string {
  let i = 0;
  while (i < text.length && DROPPED.test(text.charAt(i))) i++;
  return i === 0 ? text : text.slice(i);
}

/** Arabic-Indic and Eastern Arabic-Indic digits as ASCII digits. */
export function asciiDigits(text: string): string {
  return text.replace(/[\u0660-\u0669\u06F0-\u06F9]/g, (digit) => {
    const code = digit.charCodeAt(0);
    return String.fromCharCode(48 + code - (code >= 0x06f0 ? 0x06f0 : 0x0660));
  });
}
