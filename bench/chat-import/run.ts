/**
 * Chat import benchmark: parsing a generated 100,000-line export with `@switchboard/chat-export`
 * (median of several runs after a warm-up), beside a raw baseline measured in the same run: the
 * same text split into lines and each line tested against one fixed-format header regex (what a
 * parser for a single known format costs at least). The target for the whole import is 3 s.
 *
 *   node bench/chat-import/run.ts [--lines 100000] [--runs 5]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseChatExport } from '@switchboard/chat-export';
import { repoRoot } from '@switchboard/testkit/tools';
import { percentile, round } from '../stats.ts';
import { generateExport } from './export.ts';

const args = parseArgs({
  options: { lines: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } },
}).values;
const LINES = Number(args.lines);
const RUNS = Number(args.runs);

const text = generateExport(LINES);

function timed<T>(fn: () => T): { ms: number; value: T } {
  const start = performance.now();
  const value = fn();
  return { ms: performance.now() - start, value };
}

const RAW_HEADER = /^(\d{2})\/(\d{2})\/(\d{4}), (\d{2}):(\d{2}) - ([^:]+): /;
function raw(): number {
  let headers = 0;
  for (const line of text.split('\n')) if (RAW_HEADER.test(line)) headers++;
  return headers;
}

const parse = () => parseChatExport(text, { deviceLanguage: 'en-GB' });
parse();
raw();
const parseMs: number[] = [];
const rawMs: number[] = [];
let messages = 0;
for (let r = 0; r < RUNS; r++) {
  const p = timed(parse);
  if (!p.value.ok) throw new Error(`generated export did not parse: ${p.value.error}`);
  messages = p.value.messages.length;
  parseMs.push(p.ms);
  rawMs.push(timed(raw).ms);
}

const parseP50 = percentile(parseMs, 50);
const rawP50 = percentile(rawMs, 50);
const result = {
  lines: LINES,
  bytes: Buffer.byteLength(text),
  messages,
  parse: { runs: RUNS, p50_ms: round(parseP50), max_ms: round(Math.max(...parseMs)) },
  raw_baseline: { p50_ms: round(rawP50) },
  parse_over_raw: round(parseP50 / rawP50, 2),
  target_whole_import_ms: 3000,
};
await mkdir(join(repoRoot, 'bench/results'), { recursive: true });
await writeFile(join(repoRoot, 'bench/results/chat-import.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
