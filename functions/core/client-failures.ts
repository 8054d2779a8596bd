/**
 * Failed client authentications (docs/contract.md, "Credentials and device tokens"): what is counted, per what key,
 * and for how long. A device secret is 256 random bits, so the count is not there to stop guessing (nobody guesses
 * one) but to bound what wrong attempts cost: each one is a hash of about 10 ms of CPU.
 */

/** How many failed attempts a key may make, and in what window. */
export interface ClientFailurePolicy {
  /** Failures of one key (client id and source) after which its attempts answer 429 until its window closes. */
  limit: number;
  /** How long a window lasts from the key's first failure, ms; the count is forgotten when it closes. */
  windowMs: number;
}

/**
 * The default policy: 5 failures in 5 minutes. A device that has a wrong secret (an old one after a rotation, a
 * typo while provisioning) learns it at the first 401 and has four more tries; someone who makes it fail gets at most
 * 5 hashes per key every 5 minutes, and a blocked key costs one read per attempt, no hash.
 */
export const DEFAULT_CLIENT_FAILURE_POLICY: Readonly<ClientFailurePolicy> = { limit: 5, windowMs: 300_000 };

/** Longest source kept in a key (an IPv6 address with a zone is under 64 characters). */
const MAX_SOURCE_LENGTH = 64;

/**
 * The source of an attempt as the limiter counts it: an IPv4 address as given (an IPv4-mapped IPv6 address as its
 * IPv4), an IPv6 address as its /64 prefix (`2001:db8:1:2::/64`: one host is given a whole /64 and can pick any
 * address in it, so counting per address would count nothing), `unknown` when there is none.
 * @param address the peer's address: `requestContext.http.sourceIp` of API Gateway or of the local gateway.
 */
export function clientSourceOf(address: string | undefined): string {
  const trimmed = (address ?? '').trim().slice(0, MAX_SOURCE_LENGTH);
  if (trimmed === '') return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed);
  if (mapped !== null) return mapped[1] as string;
  if (!trimmed.includes(':')) return trimmed;
  const [withoutZone = ''] = trimmed.split('%');
  const halves = withoutZone.toLowerCase().split('::');
  if (halves.length > 2) return withoutZone;
  const groups = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':'));
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = halves.length === 2 ? Math.max(0, 8 - head.length - tail.length) : 0;
  const prefix = [...head, ...Array.from({ length: missing }, () => '0'), ...tail].slice(0, 4);
  if (prefix.length < 4 || !prefix.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return withoutZone;
  return `${prefix.map((group) => Number.parseInt(group, 16).toString(16)).join(':')}::/64`;
}

/** The key failures are counted under: the client id from one source (clientSourceOf), `{clientId}#{source}`. */
export function clientFailureKey(clientId: string, source: string): string {
  return `${clientId}#${source}`;
}
