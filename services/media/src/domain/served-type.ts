/**
 * Whether a browser opening a file of this type would render it as a document or run it on the
 * inbox's origin: HTML and XHTML, XML and every `+xml` type (SVG, RSS…), XSLT, scripts,
 * multipart. Decided on the type's parts, not on a substring of the whole: Office documents
 * (`application/vnd.openxmlformats-officedocument…`) contain "xml" in their name and are not.
 */
export function isActiveContent(mimeType: string): boolean {
  const [type = '', subtype = ''] = mimeType.toLowerCase().split('/');
  if (type === 'multipart') return true;
  return (
    subtype === 'xml' ||
    subtype.endsWith('+xml') ||
    subtype.includes('html') ||
    subtype.includes('script') ||
    subtype === 'xsl' ||
    subtype === 'xslt' ||
    subtype === 'x-xslt'
  );
}

/** Served instead of a stored type a browser would run (a type the network reported). */
const NEUTRAL_TYPE = 'application/octet-stream';

/**
 * The Content-Type of a retrieval: the stored type, or the type the caller asked for with
 * `mime_type_type` / `mime_type_subtype`. An override a browser would run is refused (the
 * caller gets a 400 naming it); a stored one is served as bytes, never as itself.
 */
export function servedType(
  stored: string,
  override: { type?: string | undefined; subtype?: string | undefined },
): { ok: true; type: string } | { ok: false; type: string } {
  const [storedType = 'application', storedSubtype = 'octet-stream'] = stored.split('/');
  if (override.type === undefined && override.subtype === undefined)
    return { ok: true, type: isActiveContent(stored) ? NEUTRAL_TYPE : stored };
  const type = `${override.type ?? storedType}/${override.subtype ?? storedSubtype}`;
  return isActiveContent(type) ? { ok: false, type } : { ok: true, type };
}
