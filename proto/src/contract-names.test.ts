import { describe, expect, it } from 'vitest';
import * as proto from './index.ts';
import { instanceId } from './instance.ts';

/** Every contract (top-level, or grouped like `fanoutRpc`) with its name and subject function. */
function contracts(): Array<{
  key: string;
  name: string;
  subject: (i: ReturnType<typeof instanceId>) => string;
}> {
  const found: Array<{ key: string; name: string; subject: (i: ReturnType<typeof instanceId>) => string }> =
    [];
  const take = (key: string, v: unknown) => {
    if (!v || typeof v !== 'object') return false;
    const c = v as { name?: unknown; subject?: unknown };
    if (typeof c.name !== 'string' || typeof c.subject !== 'function') return false;
    found.push({ key, name: c.name, subject: c.subject as (i: ReturnType<typeof instanceId>) => string });
    return true;
  };
  for (const [key, value] of Object.entries(proto)) {
    if (take(key, value) || !value || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const [inner, v] of Object.entries(value)) take(`${key}.${inner}`, v);
  }
  return found;
}

describe('contract names', () => {
  it('equal their subject operation, so a name found in a log or an outbox row names its subject', () => {
    const all = contracts();
    expect(all.length).toBeGreaterThan(50);
    const i = instanceId('names');
    const mismatched = all.flatMap(({ key, name, subject }) => {
      const operation = subject(i)
        .replace(/^sb\.(names|partners)\./, '')
        .replace(/^rpc\./, '');
      return name === operation ? [] : [`${key}: ${name} ≠ ${operation}`];
    });
    expect(mismatched).toEqual([]);
  });
});
