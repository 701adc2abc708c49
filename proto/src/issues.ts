import type { z } from 'zod';

/**
 * Zod issues as one line for an error message or a log: `path: message; …`, `(root)` for the
 * value itself. `max` keeps a long list (a foreign answer far off its schema) readable.
 */
export function issuesText(issues: readonly z.core.$ZodIssue[], max = issues.length): string {
  return issues
    .slice(0, max)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
