/** In-memory fakes of the secret checks' attempt store, for unit tests of the use cases. */
import type { ClientAttemptReservation, ClientFailureStore } from '../../functions/core/access/ports.js';

/** A key's count in its window, as the fake keeps it. */
export interface StoredAttempts {
  /** Attempts in the window without a success. */
  failures: number;
  /** Epoch ms. */
  windowEndsAt: number;
}

/**
 * A ClientFailureStore in a Map, with the window rules of the DynamoDB adapter (a reservation is atomic: it runs
 * without awaiting anything, as the conditional write does on the table); counts its calls.
 */
export class InMemoryClientFailureStore implements ClientFailureStore {
  readonly counts = new Map<string, StoredAttempts>();
  readonly calls: string[] = [];

  async reserve(key: string, now: number, policy: { limit: number; windowMs: number }): Promise<ClientAttemptReservation> {
    this.calls.push(`reserve ${key}`);
    const stored = this.counts.get(key);
    if (stored === undefined || stored.windowEndsAt <= now) {
      this.counts.set(key, { failures: 1, windowEndsAt: now + policy.windowMs });
      return { reserved: true, attempts: 1, windowEndsAt: now + policy.windowMs };
    }
    if (stored.failures >= policy.limit) return { reserved: false, windowEndsAt: stored.windowEndsAt };
    stored.failures += 1;
    return { reserved: true, attempts: stored.failures, windowEndsAt: stored.windowEndsAt };
  }

  async clear(key: string): Promise<void> {
    this.calls.push(`clear ${key}`);
    this.counts.delete(key);
  }

  async release(key: string): Promise<void> {
    this.calls.push(`release ${key}`);
    const stored = this.counts.get(key);
    if (stored !== undefined && stored.failures > 0) stored.failures -= 1;
  }
}
