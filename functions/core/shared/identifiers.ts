/**
 * The shapes of the service's identifiers, each stated once.
 *
 * Company, device and scenario ids share one pattern: letters, digits, `.`, `_`, `-`, 1 to 128 characters, starting
 * with a letter or digit. Ids are path segments, sort-key prefixes (`{deviceId}#…`) and halves of an OAuth client id,
 * so they never contain `#`, `~`, `/`, `:` or white space; tokens carry the caller's companies as a list that API
 * Gateway flattens into one space-separated string, so a company id with a space, comma, bracket or quote could not be
 * told apart from two ids.
 *
 * Generated ids (rollouts, uploads, history entries, credentials) are ULIDs: 26 characters of Crockford's base 32
 * (https://github.com/ulid/spec), sortable by creation time.
 */

/** A company, device or scenario id (see the module comment). */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Crockford's base-32 alphabet, in which ULIDs are written (no I, L, O, U). */
export const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID as `ulid` writes it: 26 upper-case characters of ULID_ALPHABET. */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The body of a pattern, without its `^` and `$` anchors, to compose it into a larger one. */
export function unanchored(pattern: RegExp): string {
  return pattern.source.replace(/^\^/, '').replace(/\$$/, '');
}
