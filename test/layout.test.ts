import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every service has the same shape ("Service skeleton" in docs/architecture.md), so a newcomer
 * finds any behaviour in the same place in each: the entry and composition files, a transport,
 * and only the known folders. A failure names the service and what is missing or unexpected.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

/** Files every service has in `src/`. */
const REQUIRED_FILES = ['main.ts', 'server.ts', 'service.ts', 'config.ts', 'index.ts'];
/** Folders a service may have in `src/`, each with one meaning across services. */
const KNOWN_FOLDERS = new Set([
  'adapters', // ports to the outside: network, SMTP, push, runtimes, sealing, caches
  'domain', // pure rules, unit-tested
  'http', // the gateway's request guards
  'migrations', // the service's own database migrations
  'partner', // the gateway's partner mode (its own app and composition root)
  'routes', // HTTP transport: one Fastify plugin per resource
  'store', // the SQL (or, in the sandbox, its in-memory state)
  'use-cases', // one module per request or command
  'workers', // stream consumers
]);
/** Files beside the required ones, and what they are. */
const KNOWN_FILES = new Set([
  'app.ts', // buildApp: the HTTP app without listening
  'db.ts', // the service's table types
  'rpc.ts', // bus transport: each request contract mapped to its use case
  'organisation-rpc.ts', // chats' second request map (organisation resources)
  'partner-main.ts', // the gateway's partner-mode process entry
]);
/** Composition only: runs other services' roots in one process and owns nothing itself. */
const COMPOSITIONS = new Set(['inbox']);

const services = readdirSync(join(root, 'services'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

describe('service skeleton', () => {
  it.each(services)('%s has the shared layout', (name) => {
    const dir = join(root, 'services', name);
    const src = join(dir, 'src');
    const problems: string[] = [];
    for (const f of ['README.md', 'package.json'])
      if (!existsSync(join(dir, f))) problems.push(`missing ${f}`);
    const required = COMPOSITIONS.has(name)
      ? ['main.ts', 'server.ts', 'config.ts', 'index.ts']
      : REQUIRED_FILES;
    for (const f of required) if (!existsSync(join(src, f))) problems.push(`missing src/${f}`);
    for (const entry of readdirSync(src)) {
      const isDir = statSync(join(src, entry)).isDirectory();
      if (isDir && !KNOWN_FOLDERS.has(entry)) problems.push(`unexpected folder src/${entry}/`);
      if (!isDir && !entry.endsWith('.test.ts') && !required.includes(entry) && !KNOWN_FILES.has(entry))
        problems.push(`unexpected file src/${entry}`);
    }
    if (!COMPOSITIONS.has(name)) {
      if (!existsSync(join(src, 'domain'))) problems.push('missing src/domain/');
      if (!existsSync(join(src, 'routes')) && !existsSync(join(src, 'rpc.ts')))
        problems.push('no transport: neither src/routes/ nor src/rpc.ts');
    }
    expect(problems).toEqual([]);
  });

  it('docs/architecture.md lists the shared layout', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    for (const folder of KNOWN_FOLDERS)
      expect(doc, `architecture.md names ${folder}/`).toContain(`\`${folder}/\``);
  });
});
