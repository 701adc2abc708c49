/**
 * One character class and no repeated group: linear on files of many megabytes (a pattern that
 * repeats a four-character group overflows the regex stack on large inputs).
 */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64 (whitespace already removed): padded to a multiple of four, or unpadded. */
export function isBase64(text: string): boolean {
  if (!BASE64_CHARS.test(text)) return false;
  return text.includes('=') ? text.length % 4 === 0 : text.length % 4 !== 1;
}
