/**
 * What PostgreSQL cannot store of what a JSON body may legally contain: `text` refuses U+0000
 * (22021), `jsonb` refuses the `\u0000` escape and unpaired surrogate escapes (22P05). The
 * inbox keeps the body's bytes as received (bytea) and stores a copy with those characters
 * replaced by U+FFFD in its `text` and `jsonb` columns, so such a body is stored, listed and
 * fanned out (the fan-out repeats the original bytes) instead of failing forever.
 */

const REPLACEMENT = '\uFFFD';

/** U+0000 and unpaired surrogates replaced with U+FFFD. */
export function storableText(s: string): string {
  const wellFormed = s.isWellFormed() ? s : s.toWellFormed();
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', REPLACEMENT) : wellFormed;
}

/** A JSON value with every string (keys included) made storable. */
export function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[storableText(k)] = storableValue(v);
    return out;
  }
  return value;
}

const isHigh = (hex: string) => /^[dD][89abAB]/.test(hex);
const isLow = (hex: string) => /^[dD][c-fC-F]/.test(hex);

/**
 * Rewrites the escapes `jsonb` refuses, in the JSON text itself: `\u0000` and unpaired
 * surrogate escapes become `\ufffd`. Backslashes in JSON text only ever start an escape, so
 * reading escapes left to right (`\\` is one) finds exactly the ones inside strings.
 */
function rewriteEscapes(json: string): string {
  if (!json.includes('\\u')) return json;
  const escapes = /\\(?:u([0-9a-fA-F]{4})|[\s\S])/g;
  const tokens: Array<{ at: number; end: number; hex: string | undefined }> = [];
  for (const m of json.matchAll(escapes)) tokens.push({ at: m.index, end: m.index + m[0].length, hex: m[1] });
  let out = '';
  let last = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (!t?.hex) continue;
    const next = tokens[i + 1];
    let replace = false;
    if (t.hex === '0000') replace = true;
    else if (isHigh(t.hex)) {
      if (next?.hex && next.at === t.end && isLow(next.hex)) {
        i++; // a proper pair: keep both
        continue;
      }
      replace = true;
    } else if (isLow(t.hex)) replace = true;
    if (replace) {
      out += `${json.slice(last, t.at)}\\ufffd`;
      last = t.end;
    }
  }
  return last === 0 ? json : out + json.slice(last);
}

/**
 * JSON text that `jsonb` accepts with the same meaning as the original, except that `\u0000`
 * and unpaired surrogates read U+FFFD; `null` when the text is not JSON at all. Everything
 * else (numbers, key order, other escapes) is left exactly as written.
 */
export function storableJsonText(json: string): string | null {
  try {
    JSON.parse(json);
  } catch {
    return null;
  }
  // Raw unpaired surrogates can only sit inside strings (anything else is not JSON).
  return rewriteEscapes(json.isWellFormed() ? json : json.toWellFormed());
}
