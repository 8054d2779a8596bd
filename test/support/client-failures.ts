/** In-memory fakes of the client credentials grant's failure store, for unit tests of the use case. */
import type { ClientFailureCount, ClientFailureStore } from '../../functions/core/ports.js';

/** A ClientFailureStore in a Map, with the window rules of the DynamoDB adapter; counts its calls. */
export class InMemoryClientFailureStore implements ClientFailureStore {
  readonly counts = new Map<string, ClientFailureCount>();
  readonly calls: string[] = [];

  async current(key: string, now: number): Promise<ClientFailureCount | undefined> {
    this.calls.push(`current ${key}`);
    const count = this.counts.get(key);
    return count !== undefined && count.windowEndsAt > now ? { ...count } : undefined;
  }

  async record(key: string, now: number, windowMs: number): Promise<ClientFailureCount> {
    this.calls.push(`record ${key}`);
    const open = await this.current(key, now);
    this.calls.pop();
    const next = open === undefined ? { failures: 1, windowEndsAt: now + windowMs } : { ...open, failures: open.failures + 1 };
    this.counts.set(key, next);
    return { ...next };
  }

  async clear(key: string): Promise<void> {
    this.calls.push(`clear ${key}`);
    this.counts.delete(key);
  }
}
