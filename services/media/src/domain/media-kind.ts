import { baseMimeType, type MediaCategory, SUPPORTED_MEDIA } from '@switchboard/proto';

export type MediaLimits = Readonly<Record<MediaCategory, number>>;

/** The network's kinds in the order a MIME type is looked up (its first kind decides). */
const KINDS: readonly MediaCategory[] = ['image', 'sticker', 'audio', 'video', 'document'];

/** The kind of media a MIME type is, by the network's list; undefined when the network takes none. */
export function mediaKindOf(mimeType: string): MediaCategory | undefined {
  const mime = baseMimeType(mimeType);
  return KINDS.find((kind) => SUPPORTED_MEDIA[kind].mimeTypes.includes(mime));
}

/**
 * MIME types `file-type` reports for bytes the network files under another name: a voice note
 * in Ogg is `audio/ogg` to the network and may sniff as Opus; Office 97 files all sniff as the
 * compound-file container; an AAC stream in MP4 sniffs as `audio/x-m4a` or `video/mp4`.
 */
const SNIFFED_ALIASES: Readonly<Record<string, readonly string[]>> = {
  'audio/ogg': ['audio/ogg', 'audio/opus', 'application/ogg'],
  'audio/mp4': ['audio/mp4', 'audio/x-m4a', 'video/mp4', 'audio/aac'],
  'audio/aac': ['audio/aac', 'audio/x-aac'],
  'audio/mpeg': ['audio/mpeg'],
  'audio/amr': ['audio/amr'],
  'video/mp4': ['video/mp4', 'video/quicktime'],
  'video/3gpp': ['video/3gpp', 'video/3gpp2', 'video/mp4'],
  'application/msword': ['application/x-cfb'],
  'application/vnd.ms-excel': ['application/x-cfb'],
  'application/vnd.ms-powerpoint': ['application/x-cfb'],
  // Office Open XML files are zip archives; `file-type` names the format when it can.
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': [
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/zip',
  ],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': [
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/zip',
  ],
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': [
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'application/zip',
  ],
};

/**
 * Names clients declare for types the network lists under another: browsers and phones send
 * `image/jpg` and `audio/mp3`, and a voice note's `audio/opus`; stored under the network's name.
 */
const DECLARED_ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'audio/mp3': 'audio/mpeg',
  'audio/opus': 'audio/ogg',
  'audio/x-m4a': 'audio/mp4',
  'audio/x-aac': 'audio/aac',
};

/** Formats with no magic number: the bytes cannot contradict the declared type. */
const UNSNIFFABLE = new Set(['text/plain']);

/** Declared types that say nothing about the bytes: the sniffed type is taken instead. */
const UNDECLARED = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

export type TypeVerdict = { ok: true; mimeType: string } | { ok: false; reason: string };

/**
 * The stored MIME type of a file, from what the client declared and what the bytes are: the
 * two must agree (a declared type only when `file-type` recognises nothing and the type has no
 * magic number); an undeclared type is taken from the bytes. The result is a type the network
 * accepts, or the verdict says why not.
 */
export function decideMimeType(declared: string | undefined, sniffedType: string | undefined): TypeVerdict {
  const named = baseMimeType(declared ?? '');
  const given = DECLARED_ALIASES[named] ?? named;
  // `file-type` names some formats with parameters (`audio/ogg; codecs=opus`).
  const sniffed = sniffedType === undefined ? undefined : baseMimeType(sniffedType);
  if (UNDECLARED.has(given)) {
    if (!sniffed) return { ok: false, reason: 'The file type is not recognisable; declare it.' };
    if (!mediaKindOf(sniffed)) return { ok: false, reason: `Files of type ${sniffed} cannot be sent.` };
    return { ok: true, mimeType: sniffed };
  }
  if (!mediaKindOf(given)) return { ok: false, reason: `Files of type ${given} cannot be sent.` };
  if (!sniffed) {
    return UNSNIFFABLE.has(given)
      ? { ok: true, mimeType: given }
      : { ok: false, reason: `The bytes are not a ${given} file.` };
  }
  const accepted = SNIFFED_ALIASES[given] ?? [given];
  if (!accepted.includes(sniffed)) {
    return { ok: false, reason: `The file was declared ${given} but its bytes are ${sniffed}.` };
  }
  return { ok: true, mimeType: given };
}

/**
 * A file name safe for `Content-Disposition` and storage: no path, no control characters, and
 * no invisible format characters (a right-to-left override shows `\u202egnp.exe.pdf` as
 * `fdp.exe.png`).
 */
export function cleanFileName(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = [...base]
    .filter((ch) => {
      const code = ch.codePointAt(0) ?? 0;
      return code >= 0x20 && code !== 0x7f && !/\p{Cf}/u.test(ch);
    })
    .join('')
    .trim()
    .slice(0, 240);
  return cleaned === '' ? null : cleaned;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'video/mp4': 'mp4',
  'video/3gpp': '3gp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
};

/** A name for a file that came without one: `media.<ext>`. */
export function defaultFileName(mimeType: string): string {
  return `media.${EXTENSIONS[baseMimeType(mimeType)] ?? 'bin'}`;
}
