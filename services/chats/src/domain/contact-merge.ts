/** One contact as a provider returned it, its wa_id normalised. */
export interface ProviderContact {
  wa_id: string;
  name: string;
  extra: unknown;
}

export interface MergedContact extends ProviderContact {
  /** The provider whose answer is kept; null for customers only the network knows. */
  provider: string | null;
}

/**
 * Contacts from several providers, one per wa_id: the answer of the provider that comes first
 * (smallest `priority`, the order given) wins; customers who wrote (`persons`) fill in what no
 * provider knows, named as the network names them.
 */
export function mergeContacts(
  answers: ReadonlyArray<{ provider: string; contacts: readonly ProviderContact[] }>,
  persons: ReadonlyArray<{ wa_id: string; profile_name: string }>,
): MergedContact[] {
  const merged = new Map<string, MergedContact>();
  for (const { provider, contacts } of answers) {
    for (const c of contacts) if (!merged.has(c.wa_id)) merged.set(c.wa_id, { ...c, provider });
  }
  for (const p of persons) {
    if (!merged.has(p.wa_id))
      merged.set(p.wa_id, { wa_id: p.wa_id, name: p.profile_name, extra: null, provider: null });
  }
  return [...merged.values()].sort(compareContacts);
}

/**
 * The contacts' order: by name with ASCII letters lowered, then by wa_id, both compared as UTF-8
 * bytes. It is exactly PostgreSQL's `lower(name collate "C")` order, so the customers who wrote
 * can be read from the database in it a page at a time (a page of the merge is then a prefix).
 */
function compareContacts(a: { name: string; wa_id: string }, b: { name: string; wa_id: string }): number {
  return (
    Buffer.compare(contactOrderKey(a.name), contactOrderKey(b.name)) ||
    Buffer.compare(Buffer.from(a.wa_id), Buffer.from(b.wa_id))
  );
}

/** PostgreSQL's `lower()` under the "C" collation changes ASCII letters only. */
function contactOrderKey(name: string): Buffer {
  return Buffer.from(
    name.replace(/[A-Z]+/g, (m) => m.toLowerCase()),
    'utf8',
  );
}

/** A small read-through cache with a time to live; failures are never stored. */
export function createTtlCache<V>(ttlMs: number, maxEntries = 1000, now: () => number = Date.now) {
  const entries = new Map<string, { value: V; expires: number }>();
  return {
    async get(key: string, load: () => Promise<V>): Promise<V> {
      const hit = entries.get(key);
      if (hit && hit.expires > now()) return hit.value;
      const value = await load();
      if (ttlMs > 0) {
        if (entries.size >= maxEntries) entries.clear();
        entries.set(key, { value, expires: now() + ttlMs });
      }
      return value;
    },
    clear(): void {
      entries.clear();
    },
  };
}
