/**
 * Top self-time functions of a V8 CPU profile (`node --cpu-prof`), as JSON.
 *
 *   node bench/profile-summary.ts <file.cpuprofile> [--top 25]
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});
const file = positionals[0];
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [--top 25]');

const Profile = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});
const profile = Profile.parse(JSON.parse(await readFile(file, 'utf8')));

const selfUs = new Map<number, number>();
profile.samples.forEach((node, i) => {
  selfUs.set(node, (selfUs.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

// One row per function (several nodes share a function when it is reached from several callers).
const byFunction = new Map<string, number>();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id);
  if (!us) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  byFunction.set(key, (byFunction.get(key) ?? 0) + us);
}
const top = [...byFunction.entries()]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top))
  .map(([fn, us]) => ({
    function: fn,
    self_ms: Math.round(us / 1000),
    share: Math.round((us / total) * 1000) / 10,
  }));
process.stdout.write(
  `${JSON.stringify({ profile: file, total_ms: Math.round(total / 1000), top }, null, 2)}\n`,
);
