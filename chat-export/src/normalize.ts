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
const SPACES_ALL = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
const INLINE_WORK =
  /[\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C\u00A0\u2000-\u200A\u202F\u205F\u3000]/;
const NEEDS_WORK =
  /[\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069\u061C\u00A0\u2000-\u200A\u202F\u205F\u3000\u060C\u0660-\u0669\u06F0-\u06F9]/;

export interface NormalizedPrefix {
  readonly text: string;
  /** `sourceIndex[i]` is the index in the original line of normalized character `i`; one extra entry for the end. */
  readonly sourceIndex: readonly number[] | null;
}

function mapChar(code: number): number {
  if (code < 0x00a0) return code;
  if (code === 0xfeff || code === 0x200e || code === 0x200f || code === 0x061c) return -1;
  if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) return -1;
  if (
    code === 0x00a0 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  ) {
    return 0x20;
  }
  if (code >= 0x0660 && code <= 0x0669) return 48 + code - 0x0660;
  if (code >= 0x06f0 && code <= 0x06f9) return 48 + code - 0x06f0;
  if (code === 0x060c) return 0x2c;
  return code;
}

/** Normalizes the first `length` characters of a line (headers are short). */
export function normalizePrefix(line: string, length: number): NormalizedPrefix {
  const head = line.length > length ? line.slice(0, length) : line;
  if (!NEEDS_WORK.test(head)) return { text: head, sourceIndex: null };
  const codes: number[] = [];
  const sourceIndex: number[] = [];
  for (let i = 0; i < head.length; i++) {
    const mapped = mapChar(head.charCodeAt(i));
    if (mapped === -1) continue;
    codes.push(mapped);
    sourceIndex.push(i);
  }
  sourceIndex.push(head.length);
  return { text: String.fromCharCode(...codes), sourceIndex };
}

/** Index in the original line of normalized position `at`. */
export function originalIndex(prefix: NormalizedPrefix, at: number): number {
  if (prefix.sourceIndex === null) return at;
  return prefix.sourceIndex[at] ?? prefix.sourceIndex[prefix.sourceIndex.length - 1] ?? at;
}

/** Drops directional marks and turns exotic spaces into plain ones (for names and placeholders). */
export function cleanInline(text: string): string {
  if (!INLINE_WORK.test(text)) return text;
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
