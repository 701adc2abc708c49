import { createHash } from 'node:crypto';
import { errorCatalogue, isErrorCode } from '@switchboard/proto';
import { type Receiver, startReceiver, waitFor } from '@switchboard/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Inbox, startInbox } from './support/inbox.ts';

/**
 * Every operation of the inbox's OpenAPI document, fuzzed against the whole stack (gateway,
 * chats, fan-out, sandbox network, real NATS and PostgreSQL) with every dependency up: path
 * parameters, query strings, headers and bodies derived from the document's own schemas, then
 * broken (wrong types, missing fields, NUL bytes, lone surrogates, huge numbers, extra fields,
 * malformed JSON). No answer may be a 5xx: bad input is the client's mistake (4xx), and with
 * every dependency healthy nothing is unavailable (503 fails too).
 *
 * Deterministic: one fixed seed per operation and a fixed number of requests each (RUNS), sent
 * one at a time, so a failure reproduces and the run is bounded (about 40 operations × 30
 * requests, some 20 s here). Each failing request is printed with its answer.
 */

// Deeper or other runs by hand (FUZZ_REPORT=1 prints the answers each operation gave):
//   FUZZ_RUNS=500 FUZZ_SEED=7 FUZZ_REPORT=1 npx vitest run test/fuzz.test.ts
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
/** Ends the run's own session: every later request would be a plain 401. */
const SKIPPED = new Set(['POST /api/v1/auth/logout/']);
const WA_ID = '4915112345678';

// ---- the document ----

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
}

interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: RequestBody }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface RequestBody {
  content?: Record<string, { schema?: JsonSchema }>;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

function operationsOf(doc: Document): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
      })),
  );
}

// ---- values ----

/** JSON text sent as is: numbers JSON.stringify cannot write (1e309) or would round. */
class Raw {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype;

function toJson(v: unknown): string {
  if (v instanceof Raw) return v.json;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const HOSTILE_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '😀',
  '👩‍👩‍👧‍👦',
  '\u202e\u0301ﷺ',
  "' or 1=1 --",
  '%00',
  '%',
  '../..',
  ' ',
  '',
  '\t\n',
  'a'.repeat(300),
  '-1',
  '0',
  '-0',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9223372036854775808',
  '99999999999999999999999',
  '1e309',
  '1.5',
  '0x10',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  '__proto__',
  // As long as a uuid, made of a uuid's characters, but not one.
  '------------------------------------',
  '00000000-0000-0000-0000-00000000000g',
];
const HOSTILE_NUMBERS = [
  '2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740993',
  '1e21',
  '1e309',
  '-1e309',
  '0',
  '-1',
  '0.5',
  '-0',
  '123456789012345678901234567890',
];

const hostileText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.constantFrom(...HOSTILE_NUMBERS).map((n) => new Raw(n)),
  fc.constantFrom(null, true, false, 0, -1, [], {}, [null], { '': null }, 'a'.repeat(70_000)),
  fc.jsonValue({ maxDepth: 2 }),
);

interface Context {
  doc: Document;
  /** The one URL webhooks and links may point to. */
  loopbackUrl: string;
  /** Values of existing objects per property name, so well-formed requests also reach them. */
  hints: Record<string, unknown[]>;
}

/** Requests a real client could make: values as the schema describes them. */
function schemaArb(ctx: Context, schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(ctx.doc, schema);
  const next = (child: JsonSchema | undefined) => schemaArb(ctx, child, depth + 1);
  if (depth > 8) return fc.constant(null);
  if ('const' in s) return fc.constant(s.const);
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map(next));
  if (s.allOf && s.allOf.length > 0) {
    const parts = s.allOf.map((p) => deref(ctx.doc, p));
    return next({
      type: 'object',
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: parts.flatMap((p) => p.required ?? []),
    });
  }
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => next({ ...s, type })));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1000);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : min + 100_000);
      const clamp = (n: number) => Math.max(-(2 ** 40), Math.min(2 ** 40, n));
      return fc.integer({ min: clamp(min), max: clamp(Math.max(min, max)) });
    }
    case 'number':
      return fc.double({
        min: s.minimum ?? -1e6,
        max: s.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'string':
      return stringArb(s, ctx.loopbackUrl);
    case 'array': {
      const minLength = s.minItems ?? 0;
      return fc.array(next(s.items), {
        minLength,
        maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)),
      });
    }
    case 'object': {
      const properties = s.properties ?? {};
      if (Object.keys(properties).length === 0 && typeof s.additionalProperties === 'object') {
        return fc.dictionary(fc.stringMatching(/^x-[a-z]{1,8}$/), next(s.additionalProperties), {
          maxKeys: 3,
        });
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, child] of Object.entries(properties)) {
        const known = ctx.hints[key];
        model[key] = known ? fc.oneof(next(child), fc.constantFrom(...known)) : next(child);
      }
      return fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArb(s: JsonSchema, loopbackUrl: string): fc.Arbitrary<string> {
  const max = s.maxLength ?? 40;
  const fit = (text: string) => text.slice(0, max);
  switch (s.format) {
    // Only ever this machine's own receiver: the run sends nothing beyond loopback.
    case 'uri':
      return fc.constantFrom(loopbackUrl, `${loopbackUrl}?fuzz=1`, `${loopbackUrl}/deeper`);
    case 'email':
      return fc.emailAddress().map(fit);
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString());
  }
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).map(fit);
  const minLength = s.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(max, 40)) });
}

function deref(doc: Document, schema: JsonSchema | undefined): JsonSchema {
  let s = schema ?? {};
  for (let hops = 0; s.$ref && hops < 10; hops++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    s = doc.components?.schemas?.[name] ?? {};
  }
  return s;
}

// ---- mutations of a well-formed body ----

/** Every node of a JSON value, depth first, with the preorder index `rewrite` uses. */
function nodes(root: unknown): unknown[] {
  const all: unknown[] = [];
  const walk = (n: unknown) => {
    all.push(n);
    if (Array.isArray(n)) n.forEach(walk);
    else if (isPlainObject(n)) Object.values(n).forEach(walk);
  };
  walk(root);
  return all;
}

const REMOVED = Symbol('removed');

/** A copy of `root` with its `index`-th node (preorder) replaced by `f(node)`, or removed. */
function rewrite(root: unknown, index: number, f: (node: unknown) => unknown): unknown {
  let i = 0;
  const go = (n: unknown): unknown => {
    if (i++ === index) return f(n);
    if (Array.isArray(n)) return n.map(go).filter((v) => v !== REMOVED);
    if (isPlainObject(n)) {
      return Object.fromEntries(
        Object.entries(n)
          .map(([k, v]) => [k, go(v)] as const)
          .filter(([, v]) => v !== REMOVED),
      );
    }
    return n;
  };
  const out = go(root);
  return out === REMOVED ? undefined : out;
}

type Mutation =
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'remove'; at: number }
  | { kind: 'extra'; at: number; key: string; value: unknown }
  | { kind: 'nul'; at: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: hostileValue }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('extra' as const),
    at: fc.nat(),
    key: fc.oneof(
      fc.constantFrom('extra', '__proto__', 'constructor', 'id', '\u0000', '\ud800', ''),
      hostileText,
    ),
    value: hostileValue,
  }),
  fc.record({ kind: fc.constant('nul' as const), at: fc.nat() }),
);

function mutate(body: unknown, m: Mutation): unknown {
  const all = nodes(body);
  const pick = (wanted: (n: unknown) => boolean): number | undefined => {
    const candidates = all.flatMap((n, i) => (wanted(n) ? [i] : []));
    return candidates.length === 0 ? undefined : candidates[m.at % candidates.length];
  };
  switch (m.kind) {
    case 'replace':
      return rewrite(body, m.at % all.length, () => m.value);
    case 'remove':
      return rewrite(body, m.at % all.length, () => REMOVED);
    case 'extra': {
      const at = pick(isPlainObject);
      if (at === undefined) return { [m.key]: m.value };
      return rewrite(body, at, (n) => {
        const copy = { ...(n as Record<string, unknown>) };
        Object.defineProperty(copy, m.key, {
          value: m.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        return copy;
      });
    }
    case 'nul': {
      const at = pick((n) => typeof n === 'string');
      if (at === undefined) return rewrite(body, m.at % all.length, () => 'nul\u0000here');
      return rewrite(body, at, (n) => {
        const text = n as string;
        const middle = Math.floor(text.length / 2);
        return `${text.slice(0, middle)}\u0000${text.slice(middle)}`;
      });
    }
  }
}

// ---- requests ----

interface FuzzRequest {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: string | undefined;
}

/** Percent-encodes a path segment; lone surrogates as the bytes a careless client would send (WTF-8). */
function encodeSegment(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : toJson(v));
/** Header values a client can send at all (fetch refuses anything else). */
const headerSafe = (text: string) => text.replace(/[^\x20-\x7e]/g, '?');

interface Fixtures {
  token: string;
  loopbackUrl: string;
  /** Known-good values per `<path> <param>`: requests that reach real objects. */
  known: Record<string, unknown[]>;
  hints: Record<string, unknown[]>;
  adminId: number;
  victimId: number;
}

function requestArb(doc: Document, op: Operation, fx: Fixtures): fc.Arbitrary<FuzzRequest> {
  const ctx: Context = { doc, loopbackUrl: fx.loopbackUrl, hints: fx.hints };
  const paramValue = (p: Parameter) => schemaArb(ctx, p.schema);
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header');

  const pathArb = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const known = fx.known[`${op.path} ${p.name}`] ?? [];
        const choices: fc.WeightedArbitrary<unknown>[] = [
          { weight: 3, arbitrary: paramValue(p) },
          { weight: 4, arbitrary: hostileText },
          { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.bigInt()).map(String) },
        ];
        if (known.length > 0) choices.push({ weight: 3, arbitrary: fc.constantFrom(...known) });
        return [p.name, fc.oneof(...choices).map(asText)];
      }),
    ),
  );

  const queryArb = fc
    .tuple(
      ...queryParams.map((p) =>
        fc.option(
          fc.oneof(
            { weight: 3, arbitrary: paramValue(p).map(asText) },
            { weight: 2, arbitrary: hostileText },
          ),
          { nil: undefined, freq: 2 },
        ),
      ),
    )
    .chain((values) =>
      fc
        .record({
          // `?limit=1&limit=1` arrives as an array: now and then.
          duplicate: fc.nat(7).map((n) => n === 0),
          unknown: fc.option(fc.tuple(hostileText, hostileText), { nil: undefined, freq: 4 }),
        })
        .map(({ duplicate, unknown }) => {
          const pairs: [string, string][] = [];
          queryParams.forEach((p, i) => {
            const v = values[i];
            if (v === undefined) return;
            pairs.push([p.name, v]);
            if (duplicate) pairs.push([p.name, v]);
          });
          if (unknown) pairs.push(unknown);
          return pairs;
        }),
    );

  const headerArb = fc.record(
    Object.fromEntries(
      headerParams.map((p) => [
        p.name,
        fc.option(fc.oneof(paramValue(p).map(asText), hostileText).map(headerSafe), { nil: undefined }),
      ]),
    ),
  );

  const authArb = fc.oneof(
    { weight: 12, arbitrary: fc.constant<string | undefined>(`Token ${fx.token}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | undefined>(
        undefined,
        '',
        'Token',
        `Token ${fx.token}x`,
        `Bearer ${fx.token}`,
        `Token ${'a'.repeat(4000)}`,
        'Basic YWRtaW46YWRtaW4=',
      ),
    },
  );

  const wellFormed = op.body ? schemaArb(ctx, op.body) : fc.constant(undefined);
  // fetch sends no body with a GET.
  const noBody = fc.constant({ body: undefined, type: undefined });
  const bodyArb: fc.Arbitrary<{ body: string | undefined; type: string | undefined }> = fc.oneof(
    { weight: 3, arbitrary: wellFormed.map((b) => json(b)) },
    {
      weight: op.body ? 6 : 1,
      arbitrary: fc
        .tuple(wellFormed, fc.array(mutationArb, { minLength: 1, maxLength: 2 }))
        .map(([b, ms]) => json(ms.reduce<unknown>((acc, m) => mutate(acc, m), b ?? {}))),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { body: '{', type: 'application/json' },
        { body: '', type: 'application/json' },
        { body: '{"a":1e309}', type: 'application/json' },
        { body: '{"a":"\\ud800"}', type: 'application/json' },
        { body: '{"a":"\\u0000"}', type: 'application/json' },
        { body: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, type: 'application/json' },
        { body: 'username=admin%00&password=x', type: 'application/x-www-form-urlencoded' },
        { body: 'username=%ED%A0%80&password=x', type: 'application/x-www-form-urlencoded' },
        { body: 'hello', type: 'text/plain' },
        { body: '{"a":1}', type: 'application/json; charset=utf-16' },
        { body: '{"a":1}', type: undefined },
      ),
    },
  );

  return fc
    .record({
      params: pathArb,
      query: queryArb,
      headers: headerArb,
      auth: authArb,
      body: op.method === 'GET' ? noBody : bodyArb,
    })
    .map(({ params, query, headers, auth, body }) => {
      let path = op.path;
      for (const [name, raw] of Object.entries(params)) {
        let value = String(raw);
        // The run's own admin is never deactivated, demoted or re-passworded by it.
        if (op.path.startsWith('/api/v1/users/{id}/') && Number(value) === fx.adminId)
          value = String(fx.victimId);
        path = path.replace(`{${name}}`, encodeSegment(value));
      }
      const sent: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') sent[name] = value;
      if (auth !== undefined) sent.authorization = auth;
      if (body.type !== undefined) sent['content-type'] = body.type;
      return { method: op.method, path, query, headers: sent, body: body.body };
    });
}

function json(value: unknown): { body: string | undefined; type: string | undefined } {
  return value === undefined
    ? { body: undefined, type: undefined }
    : { body: toJson(value), type: 'application/json' };
}

function urlOf(base: string, r: FuzzRequest): string {
  const query = r.query.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&');
  return `${base}${r.path}${query ? `?${query}` : ''}`;
}

function describeRequest(r: FuzzRequest, token: string): string {
  const show = (text: string) => (text.length > 400 ? `${text.slice(0, 400)}… (${text.length} chars)` : text);
  const headers = Object.entries(r.headers)
    .map(([k, v]) => `${k}: ${show(v.replace(token, '<admin token>'))}`)
    .join('; ');
  return `${r.method} ${show(urlOf('', r))}\n      headers: ${headers}${r.body === undefined ? '' : `\n      body: ${show(JSON.stringify(r.body))}`}`;
}

function seedOf(key: string): number {
  let h = SEED;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h;
}

// ---- the run ----

let inbox: Inbox;
let receiver: Receiver;
let loopbackUrl: string;
/** The admin's session, kept for the whole run (logout is not fuzzed). */
let token: string;
/** A customer's message: its chat exists and its care window is open. */
let customerMessage: { id: string; wamid: string | null };

beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 204 }));
  loopbackUrl = receiver.url;
  inbox = await startInbox({ fanout: true });
  // Once: fuzzed logins count as failures from this address, and enough of them answer 429.
  token = await inbox.login();
  await inbox.customerSays(WA_ID, { type: 'text', text: { body: 'Hi!' }, profile_name: 'Ana' });
  await waitFor(
    async () => {
      const res = await inbox.api('GET', `/api/v1/messages/?wa_id=${WA_ID}`, { token });
      if (res.status !== 200) return false;
      const [first] = ((await res.json()) as { results: (typeof customerMessage)[] }).results;
      if (first) customerMessage = first;
      return first !== undefined;
    },
    30_000,
    'the customer message to be stored',
  );
});

afterAll(async () => {
  await inbox?.stop();
  await receiver?.close();
});

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await inbox.api(method, path, { token, ...(body !== undefined && { body }) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Objects for requests to reach: a user to spare the admin, a group, a webhook, the customer's chat. */
async function fixtures(): Promise<Fixtures> {
  const admin = await call<{ id: number }>('GET', '/api/v1/users/me/');
  const victim = await call<{ id: number }>('POST', '/api/v1/users/', {
    username: 'fuzz-victim',
    profile: { role: 'user' },
  });
  const group = await call<{ id: number }>('POST', '/api/v1/groups/', { name: 'fuzz group' });
  const webhook = await call<{ id: string }>('POST', '/api/v1/webhooks/waba/', { url: loopbackUrl });
  const { id, wamid } = customerMessage;
  const messageIds = wamid ? [id, wamid] : [id];
  const tag = await call<{ id: number }>('POST', '/api/v1/tags/', {
    name: 'fuzz tag',
    web_inbox_color: '#abcdef',
  });
  const chatTagging = await call<{ id: number }>('POST', '/api/v1/chat_tagging/', {
    chat: WA_ID,
    tag: tag.id,
  });
  const messageTagging = await call<{ id: number }>('POST', '/api/v1/message_tagging/', {
    message: id,
    tag: tag.id,
  });
  const saved = await call<{ id: number }>('POST', '/api/v1/saved_responses/', {
    name: 'fuzz',
    text: 'Fuzz text',
  });
  // Refused at connect time by the SSRF guard (loopback): a provider that always fails.
  const provider = await call<{ id: number }>('POST', '/api/v1/contact_providers/', {
    name: 'fuzz provider',
    kind: 'http',
    url: loopbackUrl,
  });
  const pushToken = await call<{ id: number }>('POST', '/api/v1/push_tokens/', {
    token: 'fuzz-device',
    platform: 'fcm',
  });
  return {
    token,
    loopbackUrl,
    adminId: admin.id,
    victimId: victim.id,
    hints: {
      groups: [[group.id]],
      assigned_to_user: [victim.id, null],
      assigned_group: [group.id, null],
      wa_id: [WA_ID],
      customer_wa_id: [WA_ID],
      to: [WA_ID],
      chat: [WA_ID],
      tag: [tag.id],
      message: messageIds,
    },
    known: {
      '/api/v1/users/{id}/ id': [victim.id],
      '/api/v1/users/{id}/refresh_token/ id': [victim.id],
      '/api/v1/groups/{id}/ id': [group.id],
      '/api/v1/messages/{id}/ id': messageIds,
      '/api/v1/chats/{wa_id}/ wa_id': [WA_ID],
      '/api/v1/chat_assignment/{wa_id}/ wa_id': [WA_ID],
      ...Object.fromEntries(
        ['', 'verify/', 'block/', 'report/'].map((rest) => [
          `/api/v1/contacts/{wa_id}/${rest} wa_id`,
          [WA_ID],
        ]),
      ),
      '/api/v1/tags/{id}/ id': [tag.id],
      '/api/v1/chat_tagging/{id}/ id': [chatTagging.id],
      '/api/v1/message_tagging/{id}/ id': [messageTagging.id],
      '/api/v1/saved_responses/{id}/ id': [saved.id],
      '/api/v1/contact_providers/{id}/ id': [provider.id],
      '/api/v1/push_tokens/{id}/ id': [pushToken.id],
      ...Object.fromEntries(
        ['', 'test/', 'deliveries/', 'replay/', 'rotate_secret/'].map((rest) => [
          `/api/v1/webhooks/waba/{id}/${rest} id`,
          [webhook.id],
        ]),
      ),
    },
  };
}

it(
  `answers no fuzzed request to any documented operation with a 5xx (${RUNS} requests per operation, seed ${SEED})`,
  async () => {
    const doc = await call<Document>('GET', '/api/v1/schema/');
    const fx = await fixtures();
    const operations = operationsOf(doc).filter((op) => !SKIPPED.has(`${op.method} ${op.path}`));
    expect(operations.length).toBeGreaterThan(25);

    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    for (const op of operations) {
      const key = `${op.method} ${op.path}`;
      const answered: Record<string, number> = {};
      const requests = fc.sample(requestArb(doc, op, fx), { seed: seedOf(key), numRuns: RUNS });
      for (const r of requests) {
        let status: number;
        let answer: string;
        try {
          const res = await fetch(urlOf(inbox.url, r), {
            method: r.method,
            headers: r.headers,
            ...(r.body !== undefined && { body: r.body }),
            signal: AbortSignal.timeout(20_000),
          });
          status = res.status;
          answer = await res.text();
        } catch (err) {
          status = 0;
          answer = `no answer: ${String(err)}`;
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
        answered[status] = (answered[status] ?? 0) + 1;
        if (status >= 500 || status === 0) {
          failures.push(`${status} for ${describeRequest(r, token)}\n      answer: ${answer.slice(0, 300)}`);
        } else if (status >= 400) {
          // Every error the inbox answers is in the one catalogue, with the catalogue's status.
          const code = codeOf(answer);
          const entry = code !== undefined && isErrorCode(code) ? errorCatalogue[code] : undefined;
          if (entry?.status !== status) {
            failures.push(`uncatalogued ${status} ${code} for ${describeRequest(r, token)}`);
          }
        }
      }
      // Which answers each operation gave: shows whether the requests get past validation at all.
      if (process.env.FUZZ_REPORT) console.log(`${key} ${JSON.stringify(answered)}`);
    }

    expect(failures, `${failures.length} requests failed:\n  ${failures.join('\n  ')}`).toEqual([]);
    // The run kept its session and the stack its health, so the requests above were really served.
    expect((await inbox.api('GET', '/api/v1/users/me/', { token })).status).toBe(200);
    expect((await inbox.api('GET', '/api/v1/status/health/')).status).toBe(200);
    expect(statuses['200'] ?? 0, JSON.stringify(statuses)).toBeGreaterThan(operations.length);
  },
  Math.max(180_000, RUNS * 6_000),
);

/** The `code` of an inbox error body (or of the health answer), if the body has one. */
function codeOf(answer: string): string | undefined {
  try {
    const body: unknown = JSON.parse(answer);
    return body && typeof body === 'object' && 'code' in body && typeof body.code === 'string'
      ? body.code
      : undefined;
  } catch {
    return undefined;
  }
}

/** 3,200 characters that do not compress: past the size of a btree index row (2,704 bytes). */
function unindexable(): string {
  return Array.from({ length: 50 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('');
}

/**
 * Requests that were answered with a 5xx (found by fuzz runs like the one above, and by a review
 * of the same edges), replayed one by one: each is now refused at the edge as a 400
 * `validation_error` naming the field, before anything reaches PostgreSQL.
 */
const FOUND: {
  name: string;
  method: string;
  path: string;
  body?: string;
  type?: string;
  anonymous?: boolean;
  field: string;
  message?: RegExp;
}[] = [
  { name: 'user id past 2^31−1', method: 'GET', path: '/api/v1/users/2147483648/', field: 'id' },
  {
    name: 'user id past 2^31−1 (delete)',
    method: 'DELETE',
    path: '/api/v1/users/795213776465/',
    field: 'id',
  },
  {
    name: 'refresh token for a user id past 2^31−1',
    method: 'POST',
    path: '/api/v1/users/957962399268/refresh_token/',
    field: 'id',
  },
  { name: 'group id past 2^31−1', method: 'GET', path: '/api/v1/groups/2147483648/', field: 'id' },
  {
    name: 'group rename, id past 2^31−1',
    method: 'PATCH',
    path: '/api/v1/groups/120082821548/',
    body: '{"name":"le"}',
    field: 'id',
  },
  {
    name: 'new user in groups past 2^31−1',
    method: 'POST',
    path: '/api/v1/users/',
    body: '{"username":"fuzzed","groups":[151069241311]}',
    field: 'groups.0',
  },
  {
    name: 'chat assigned to a user id past 2^31−1',
    method: 'PATCH',
    path: `/api/v1/chat_assignment/${WA_ID}/`,
    body: '{"assigned_to_user":2147483648}',
    field: 'assigned_to_user',
  },
  {
    name: 'chat assigned to a group id past 2^31−1',
    method: 'PATCH',
    path: `/api/v1/chat_assignment/${WA_ID}/`,
    body: '{"assigned_group":9007199254740991}',
    field: 'assigned_group',
  },
  {
    name: 'chats filtered by a user id past 2^31−1',
    method: 'GET',
    path: '/api/v1/chats/?assigned_to_user=213078938110',
    field: 'assigned_to_user',
  },
  {
    name: 'a message id shaped like a UUID that is not one',
    method: 'GET',
    path: '/api/v1/messages/------------------------------------/',
    field: 'id',
  },
  {
    name: 'an empty webhook id',
    method: 'DELETE',
    path: '/api/v1/webhooks/waba//',
    field: 'id',
    message: /^This field may not be blank\.$/,
  },
  {
    name: 'an empty webhook id (test call)',
    method: 'GET',
    path: '/api/v1/webhooks/waba//test/',
    field: 'id',
  },
  {
    name: 'webhooks filtered by an owner id past 2^31−1',
    method: 'GET',
    path: '/api/v1/webhooks/waba/?owner=510431221644',
    field: 'owner',
  },
  {
    name: 'NUL in a group name',
    method: 'POST',
    path: '/api/v1/groups/',
    body: '{"name":"&a43\\u0000%/uy_"}',
    field: 'name',
    message: /^Null characters are not allowed\.$/,
  },
  {
    name: 'lone surrogate in a group name',
    method: 'PATCH',
    path: '/api/v1/groups/1/',
    body: '{"name":"x\\udfffy"}',
    field: 'name',
    message: /^Surrogate characters are not allowed: U\+DFFF\.$/,
  },
  {
    name: 'NUL in a message (stored as jsonb)',
    method: 'POST',
    path: '/api/v1/messages/',
    body: `{"wa_id":"${WA_ID}","type":"text","text":{"body":"Hello\\u0000"}}`,
    field: 'text.body',
  },
  {
    name: 'lone surrogate in a message (stored as jsonb)',
    method: 'POST',
    path: '/api/v1/messages/',
    body: `{"wa_id":"${WA_ID}","type":"text","text":{"body":"Hello \\ud83d"}}`,
    field: 'text.body',
    message: /^Surrogate characters are not allowed: U\+D83D\.$/,
  },
  {
    name: 'an e-mail address too long to index',
    method: 'POST',
    path: '/api/v1/users/',
    body: JSON.stringify({ username: 'longmail', email: `${unindexable()}@example.com` }),
    field: 'email',
  },
  {
    name: 'a user in 70,000 groups (more parameters than a statement takes)',
    method: 'POST',
    path: '/api/v1/users/',
    body: JSON.stringify({ username: 'manygroups', groups: Array<number>(70_000).fill(1) }),
    field: 'groups',
  },
  {
    name: 'NUL in a user’s name',
    method: 'POST',
    path: '/api/v1/users/',
    body: '{"username":"fuzzed","first_name":"A\\u0000"}',
    field: 'first_name',
  },
  {
    name: 'NUL in an event-log filter',
    method: 'GET',
    path: '/api/v1/audit_logs/?limit=25&target_type=tag&action=%00',
    field: 'action',
  },
  {
    name: 'NUL in the username of an unauthenticated login',
    method: 'POST',
    path: '/api/v1/auth/token/',
    body: '{"username":"p\\u0000r","password":"U=|>_`-N8?18"}',
    anonymous: true,
    field: 'username',
  },
  {
    name: 'NUL in a form-encoded login',
    method: 'POST',
    path: '/api/v1/auth/token/',
    body: 'username=admin%00&password=x',
    type: 'application/x-www-form-urlencoded',
    anonymous: true,
    field: 'username',
  },
  {
    // JSON.stringify (the bus) and jsonb overflow their stacks on such values.
    name: 'a tag’s extra nested 200,000 levels deep',
    method: 'POST',
    path: '/api/v1/tags/',
    body: `{"name":"deep","web_inbox_color":"#ffffff","extra":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
    field: ['extra', ...Array<string>(63).fill('0')].join('.'),
    message: /^Nested more than 64 levels deep\.$/,
  },
  {
    name: 'a field named like an Object.prototype member',
    method: 'POST',
    path: '/api/v1/auth/token/',
    body: '{"username":"u","password":"p","constructor":"x\\udfffy"}',
    anonymous: true,
    field: 'constructor',
  },
];

it.each(FOUND)('refuses $name with 400 on `$field`', async (c) => {
  const res = await fetch(`${inbox.url}${c.path}`, {
    method: c.method,
    headers: {
      ...(!c.anonymous && { authorization: `Token ${token}` }),
      ...(c.body !== undefined && { 'content-type': c.type ?? 'application/json' }),
    },
    ...(c.body !== undefined && { body: c.body }),
  });
  const answer = (await res.json()) as { code: string; fields?: Record<string, string[]> };
  expect({ status: res.status, code: answer.code }).toEqual({ status: 400, code: 'validation_error' });
  expect(Object.keys(answer.fields ?? {})).toContain(c.field);
  if (c.message) expect(answer.fields?.[c.field]).toEqual([expect.stringMatching(c.message)]);
});
