/**
 * `npm run import-chat -- <export.txt|export.zip> --wa-id 447700900123 --utc-offset +01:00 --lang en-GB`
 *
 * Imports a chat exported from the WhatsApp Business app into an inbox (`POST chat_import/`).
 * Reads the `.txt` or the `.zip` the app shares (the chat text plus its media), checks it with the
 * same parser the inbox runs, then uploads it, showing progress on stderr; the answer (new
 * messages, warnings) goes to stdout as JSON.
 *
 *   --url         the inbox (default $INBOX_URL or http://127.0.0.1:8080)
 *   --token       an inbox token of an admin or of a user who may write to the chat ($INBOX_TOKEN)
 *   --wa-id       the customer's number, digits with the country code
 *   --handle      the customer's name as the export writes it, when it is not their number
 *   --utc-offset  the exporting phone's offset: minutes (-180) or hours (+02:00)
 *   --time-zone   the phone's IANA zone (Europe/Berlin): wins over --utc-offset, right across summer time
 *   --lang        the phone's language, with country when known (pt-BR)
 *   --dry-run     check the export and print what would be sent, upload nothing
 */
import { parseArgs } from 'node:util';
import { buildRequest, parseOffset, readExport } from './import-chat/request.ts';

function fail(message: string): never {
  process.stderr.write(`import-chat: ${message}\n`);
  process.exit(1);
}

/** `--utc-offset -180` as `--utc-offset=-180`: parseArgs takes a value starting with a dash for an option. */
function withNegativeOffsets(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (arg === '--utc-offset' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

const args = (() => {
  try {
    return parseArgs({
      args: withNegativeOffsets(process.argv.slice(2)),
      allowPositionals: true,
      options: {
        url: { type: 'string', default: process.env.INBOX_URL ?? 'http://127.0.0.1:8080' },
        token: { type: 'string', default: process.env.INBOX_TOKEN ?? '' },
        'wa-id': { type: 'string' },
        handle: { type: 'string' },
        'utc-offset': { type: 'string' },
        'time-zone': { type: 'string' },
        lang: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
})();
const { values, positionals } = args;

const progress = (message: string) => process.stderr.write(`${message}\n`);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const [path] = positionals;
if (!path) fail('give the export file (.txt or .zip)');
const waId = values['wa-id'];
if (!waId || !/^\d{5,20}$/.test(waId))
  fail('--wa-id: the customer’s number, digits only with the country code');
if (!values['utc-offset'] && !values['time-zone']) fail('--utc-offset (or --time-zone) is required');
if (!values.lang) fail('--lang: the phone’s language, e.g. de or pt-BR');

try {
  progress(`reading ${path}`);
  const { text, media } = await readExport(path);
  progress(`checking ${text.split('\n').length} lines and ${media.size} media files`);
  const { body, messages, senders } = buildRequest(text, media, {
    waId,
    ...(values.handle && { handle: values.handle }),
    utcOffsetMinutes: values['utc-offset'] ? parseOffset(values['utc-offset']) : 0,
    ...(values['time-zone'] && { timeZone: values['time-zone'] }),
    language: values.lang,
  });
  const payload = Buffer.from(JSON.stringify(body));
  progress(`${messages} messages from ${senders.join(' and ')}; request ${mb(payload.length)}`);
  if (values['dry-run']) {
    process.stdout.write(`${JSON.stringify({ messages, senders, bytes: payload.length }, null, 2)}\n`);
    process.exit(0);
  }
  if (!values.token) fail('--token (or INBOX_TOKEN): an inbox token');

  // Upload in chunks so a large export shows how far it got.
  const CHUNK = 1024 * 1024;
  let sent = 0;
  let lastShown = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= payload.length) {
        controller.close();
        return;
      }
      const chunk = payload.subarray(sent, sent + CHUNK);
      sent += chunk.length;
      controller.enqueue(chunk);
      if (sent - lastShown >= 5 * CHUNK || sent === payload.length) {
        lastShown = sent;
        progress(`uploaded ${mb(sent)} of ${mb(payload.length)}`);
      }
    },
  });
  const started = Date.now();
  const waiting = setInterval(() => {
    if (sent >= payload.length) progress(`importing… ${Math.round((Date.now() - started) / 1000)} s`);
  }, 2000);
  const res = await fetch(new URL('/api/v1/chat_import/', values.url), {
    method: 'POST',
    headers: {
      authorization: `Token ${values.token}`,
      'content-type': 'application/json',
      'content-length': String(payload.length),
    },
    body: stream,
    duplex: 'half',
  } as RequestInit & { duplex: 'half' });
  clearInterval(waiting);
  const answer = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) fail(`the inbox answered ${res.status}: ${JSON.stringify(answer)}`);
  progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(
    `${JSON.stringify({ wa_id: answer.wa_id, new_messages: answer.new_messages, warnings: answer.warnings }, null, 2)}\n`,
  );
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
