import { NetworkFailure } from './failure.ts';
import { NetworkErrorCode } from './wire.ts';

/** One schema problem, from zod directly or from Fastify's validation error list. */
export interface SchemaIssue {
  readonly code: string;
  readonly path: readonly (string | number)[];
  readonly message: string;
  readonly keys?: readonly string[];
  /** The request has nothing at `path` (zod reports a missing literal as a wrong value). */
  readonly missing?: boolean;
}

/** The value at `path` inside a parsed request, or undefined when any step is absent. */
export function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current: unknown = root;
  for (const step of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, step);
  }
  return current;
}

function dotted(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

function describe(issue: SchemaIssue): { code: number; details: string } {
  const at = dotted(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue.keys ?? []).map((k) => `"${k}"`).join(', ');
    return { code: NetworkErrorCode.invalidParameter, details: `Unexpected key ${keys} on param "${at}".` };
  }
  if (issue.missing || (issue.code === 'invalid_type' && /received undefined/.test(issue.message))) {
    return { code: NetworkErrorCode.requiredParameterMissing, details: `The parameter ${at} is required.` };
  }
  if (issue.code === 'invalid_union' && issue.path.at(-1) === 'type') {
    return { code: NetworkErrorCode.parameterValueNotValid, details: `Param ${at} is not a valid type.` };
  }
  return { code: NetworkErrorCode.parameterValueNotValid, details: `Param ${at}: ${issue.message}` };
}

/**
 * The Cloud API error the network gives for a malformed request: 100 for unknown keys,
 * 131008 for a missing parameter, 131009 for a bad value. The first issue decides the code.
 */
export function failureFromIssues(issues: readonly SchemaIssue[]): NetworkFailure {
  const first = issues[0];
  if (!first) return new NetworkFailure(NetworkErrorCode.invalidParameter, 'The request is not valid.');
  const { code } = describe(first);
  const details = issues
    .slice(0, 5)
    .map((i) => describe(i).details)
    .join(' ');
  return new NetworkFailure(code, details);
}
