/**
 * Entity tags and `If-None-Match` (RFC 9110 §8.8.3, §13.1.2): the HTTP side of a conditional GET. The core computes
 * an opaque version of what it answers; this quotes it and tells whether the client already holds it.
 */

/** The strong entity tag of an opaque version: `"<opaque>"`. The opaque part must not contain `"`. */
export function strongEntityTag(opaque: string): string {
  return `"${opaque}"`;
}

/** Every entity tag of an If-None-Match list, as its opaque part (`W/` dropped: the comparison is weak). */
const ENTITY_TAG = /(?:W\/)?"([^"]*)"/g;

/**
 * Whether a GET with this `If-None-Match` header must be answered 304 (RFC 9110 §13.1.2): `*` matches any current
 * representation; otherwise the header is a comma-separated list of entity tags, strong or weak (`W/"…"`), and any
 * whose opaque part equals `opaque` matches (weak comparison). An absent or empty header, or one holding no valid
 * entity tag, matches nothing.
 */
export function ifNoneMatchHolds(header: string | undefined, opaque: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const match of header.matchAll(ENTITY_TAG)) if (match[1] === opaque) return true;
  return false;
}
