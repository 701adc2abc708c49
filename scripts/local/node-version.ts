/**
 * Imported first by start.ts, so that an older Node.js that can run TypeScript at all stops
 * here with a sentence rather than somewhere later with a stack trace. Node built-ins only.
 */

/** The Node.js major version the repository pins (package.json `engines`, the `node` devDependency). */
export const REQUIRED_NODE_MAJOR = 24;

/** Why this Node.js cannot run Switchboard, in one sentence with the remedy; undefined when it can. */
export function nodeVersionProblem(version: string): string | undefined {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (major === REQUIRED_NODE_MAJOR) return undefined;
  return `Switchboard needs Node.js ${REQUIRED_NODE_MAJOR}, but this is Node.js ${version.replace(/^v/, '')}; run \`npm ci\` and then \`npm start\` (the repository brings its own Node.js ${REQUIRED_NODE_MAJOR}), or install Node.js ${REQUIRED_NODE_MAJOR}.`;
}

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  process.stdout.write(`start failed: ${problem}\n`);
  process.exit(1);
}
