import { z } from 'zod';

/** Page size of every inbox list when the client names none. */
export const PAGE_SIZE_DEFAULT = 20;
/** Largest page of every inbox list: a larger `limit` is clamped to it. */
export const PAGE_SIZE_MAX = 100;

/**
 * `limit` of a list, as Django REST Framework's LimitOffsetPagination reads it with `max_limit`:
 * above the maximum it is clamped to the maximum (not refused); below 1, not a whole number or
 * not a number at all is a 400.
 */
export const PageLimit = z.coerce
  .number()
  .min(1)
  .refine(Number.isInteger, 'A valid integer is required.')
  .transform((n) => Math.min(n, PAGE_SIZE_MAX))
  .default(PAGE_SIZE_DEFAULT)
  .meta({
    type: 'integer',
    default: PAGE_SIZE_DEFAULT,
    description: `Page size, ${PAGE_SIZE_DEFAULT} by default; a larger value than ${PAGE_SIZE_MAX} answers ${PAGE_SIZE_MAX}.`,
  });

/** `offset` of a list: how many items to skip. */
export const PageOffset = z.coerce.number().int().min(0).default(0);

/** The query of every limit/offset list of the inbox (extend it with the list's filters). */
export const Pagination = z.object({ limit: PageLimit, offset: PageOffset });

/** The answer of every limit/offset list of the inbox: DRF's `{count, next, previous, results}`. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({
    count: z.number().int().describe('All items of the list (with its filters), not only this page.'),
    next: z.string().nullable().describe('URL of the next page; null on the last.'),
    previous: z.string().nullable().describe('URL of the previous page; null on the first.'),
    results: z.array(item),
  });
}

/** DRF-style `next`/`previous` links for limit/offset lists, relative to the request URL. */
export function pageLinks(
  requestUrl: string,
  baseUrl: string,
  count: number,
  limit: number,
  offset: number,
): { next: string | null; previous: string | null } {
  const link = (o: number) => {
    const u = new URL(requestUrl, baseUrl);
    u.searchParams.set('limit', String(limit));
    u.searchParams.set('offset', String(o));
    return u.toString();
  };
  return {
    next: offset + limit < count ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
  };
}

/** One page of a list as every inbox list answers it, with its links. */
export function pageOf<T>(
  requestUrl: string,
  baseUrl: string,
  query: { limit: number; offset: number },
  found: { count: number; results: T[] },
): { count: number; next: string | null; previous: string | null; results: T[] } {
  return {
    count: found.count,
    ...pageLinks(requestUrl, baseUrl, found.count, query.limit, query.offset),
    results: found.results,
  };
}
