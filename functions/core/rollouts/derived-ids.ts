/**
 * Ids a rollout derives instead of drawing at random, so that work run twice (a redelivered message, a chunk sent
 * again, a join finished after a crash) writes the very same items: its deployments' ids and its commands' ids.
 */
import { createHash } from 'node:crypto';
import { encodeTime } from 'ulid';
import { ULID_ALPHABET } from '../shared/identifiers.js';

/**
 * A ULID whose time part is `at` (ISO-8601) and whose 80 random bits are the first 10 bytes of sha256(`seed`): the
 * same for the same instant and seed.
 */
export function derivedId(at: string, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let random = '';
  let value = 0;
  let bits = 0;
  for (const byte of digest.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      random += ULID_ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return encodeTime(Date.parse(at), 10) + random;
}

/**
 * The id of the deployment a rollout makes on a device: a ULID whose time part is the wave's start (`startedAt`,
 * ISO-8601) and whose 80 random bits are the first 10 bytes of sha256(rolloutId + deviceId). A chunk run again gets
 * the same ids, so a DEPLOY whose write was already made finds its own id stored and reports SUCCESS.
 */
export function rolloutDeploymentId(rolloutId: string, deviceId: string, startedAt: string): string {
  return derivedId(startedAt, rolloutId + deviceId);
}
