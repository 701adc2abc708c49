/** A LIKE pattern matching `search` anywhere, its wildcards taken literally, lower-cased for name matching. */
export function containsPattern(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}
