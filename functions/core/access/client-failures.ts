/**
 * Failed client authentications (docs/contract.md, "Credentials and device tokens"): what is counted, per what key,
 * and for how long, and how one secret check runs within those bounds (limitedCheck). A device secret is 256 random
 * bits, so the count is not there to stop guessing (nobody guesses one) but to bound what wrong attempts cost: each
 * one is a hash of about 10 ms of CPU (a local user's password, about 40 ms).
 */
import type { ClientFailureStore, HashSlot, VerificationGate } from './ports.js';

/** How many failed attempts a key may make, and in what window. */
export interface ClientFailurePolicy {
  /**
   * Attempts of one key (client id and source) verified per window, at most: every attempt is counted before its
   * hash, a success clears the count, so this is the number of failures after which the key's attempts are refused
   * until its window closes, and also the most attempts of one key verified at once.
   */
  limit: number;
  /** How long a window lasts from the key's first failure, ms; the count is forgotten when it closes. */
  windowMs: number;
}

/**
 * The default policy: 5 failures in 5 minutes. A device that has a wrong secret (an old one after a rotation, a
 * typo while provisioning) learns it at the first 401 and has four more tries; someone who makes it fail gets at most
 * 5 hashes per key every 5 minutes, and a blocked key costs one refused conditional write per attempt, no hash.
 */
export const DEFAULT_CLIENT_FAILURE_POLICY: Readonly<ClientFailurePolicy> = { limit: 5, windowMs: 300_000 };

/** Longest source kept in a key (an IPv6 address with a zone is under 64 characters). */
const MAX_SOURCE_LENGTH = 64;

/**
 * The source of an attempt as the limiter counts it: an IPv4 address as given (an IPv4-mapped IPv6 address as its
 * IPv4), an IPv6 address as its /64 prefix (`2001:db8:1:2::/64`: one host is given a whole /64 and can pick any
 * address in it, so counting per address would count nothing), `unknown` when there is none.
 * @param address the address the request came from, as the service's edge saw it (undefined when unknown).
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

/**
 * The key a user's failed sign-ins are counted under: `user:{username in lower case}#{source}`. No device key starts with `user:`
 * (a company id has no colon), so a username never shares a device's count.
 */
export function userFailureKey(username: string, source: string): string {
  // Usernames are case-insensitive (the user pool's and the local store's): `Alice` and `alice` share one count, else
  // each spelling would get attempts of its own.
  return `user:${username.toLowerCase()}#${source}`;
}

/** Seconds a client is told to wait when the process has too many verifications under way. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** What bounds secret checks: the durable count per key, this process's gate, the policy and the clock. */
export interface CheckLimits {
  /** Attempts per key, shared by every process (the clientFailures table). */
  failures: ClientFailureStore;
  /** This process's admission and ordering of hash verifications. */
  gate: VerificationGate;
  /** How many attempts a key may make, in what window. */
  policy: ClientFailurePolicy;
  /** The clock, epoch ms. @default Date.now */
  now?: () => number;
}

/** How a check refused before its hash is answered (each credential form answers in its own format). */
export interface CheckRefusals {
  /** The process has as many attempts under way as it admits: the service is busy; retry after `seconds`. */
  busy(seconds: number): Error;
  /** The key is at its limit: too many attempts; retry after `seconds` (until its window closes, at least 1). */
  blocked(seconds: number): Error;
}

/**
 * Runs one secret check of `key` (clientFailureKey, userFailureKey) from `source` (clientSourceOf) within `limits`,
 * in cost order: the gate admits it before any I/O (else `refusals.busy`, to retry after BUSY_RETRY_AFTER_SECONDS);
 * the store reserves the attempt before any hash (else `refusals.blocked`, to retry after the seconds until the key's
 * window closes), so a key gets at most `policy.limit` hashes per window across every process; then `check` runs, its hash
 * through `slot` (behind the attempts of trusted sources when the key has other attempts in its window). A check that
 * authenticates clears the key's count; a wrong secret leaves the attempt counted; a check that throws (a backend
 * failed) gives the attempt back (best effort). The pass always leaves the gate.
 * @returns what `check` returned: true when the secret was right.
 * @throws what `refusals` make; what `check` or the store throws.
 */
export async function limitedCheck(
  limits: CheckLimits,
  attempt: { key: string; source: string },
  refusals: CheckRefusals,
  check: (slot: HashSlot) => Promise<boolean>,
): Promise<boolean> {
  const { failures, gate, policy, now = Date.now } = limits;
  const pass = gate.enter(attempt.source);
  if (pass === undefined) throw refusals.busy(BUSY_RETRY_AFTER_SECONDS);
  let failed = false;
  try {
    const at = now();
    const reservation = await failures.reserve(attempt.key, at, policy);
    if (!reservation.reserved) throw refusals.blocked(Math.max(1, Math.ceil((reservation.windowEndsAt - at) / 1000)));
    const suspect = reservation.attempts > 1;
    let authenticated: boolean;
    try {
      authenticated = await check((hash) => pass.verify(hash, suspect));
    } catch (error) {
      // The check could not be made (a backend failed): not a failure of the client's, so its attempt is given back,
      // else a device retrying through an outage would find itself blocked once the outage is over.
      await failures.release(attempt.key).catch(() => undefined);
      throw error;
    }
    if (!authenticated) {
      failed = true;
      return false;
    }
    await failures.clear(attempt.key);
    return true;
  } finally {
    pass.leave(failed);
  }
}
