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
