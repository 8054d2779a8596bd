/**
 * Admission control of one local address: at most `maxInFlight` requests are served at once (token check, body,
 * handler) and at most `maxQueued` more wait for a place, first come first served; a request that finds the queue
 * full, or whose wait runs out, is refused at once. Locally every handler runs on the one event loop of the runtime,
 * so admitting more work than the CPU serves does not serve more: it makes every request slower (Little's law: the
 * time in the system grows with the work in it) until the embedded backends' clients time out. Refusing early keeps
 * the admitted requests fast and tells the others when to come back.
 *
 * How long a request may wait depends on whether the queue is absorbing a burst or standing (the idea of CoDel,
 * RFC 8289: a queue that does not drain within a short interval is overload, not a burst): while the queue has been
 * empty at some moment within the last `overloadWaitMs`, a request may wait `maxWaitMs` (a burst of concurrent
 * requests, such as a script's, is served rather than refused); once it has held requests for longer than that
 * without emptying, a newcomer may wait only `overloadWaitMs`, so that under sustained overload what is admitted
 * waits little and what is not is refused quickly.
 *
 * Written here rather than on p-limit (a dependency): p-limit cannot withdraw a queued task whose wait ran out, so an
 * abandoned request would keep its place in the queue and count against the queue's bound until its turn came.
 */
import { CountsByKey } from '../adapters/counts-by-key.js';

/** The bounds of one address. */
export interface AdmissionLimits {
  /** Requests served at once; at least 1. */
  maxInFlight: number;
  /** Requests waiting for a place; 0 refuses every request that finds no free place. */
  maxQueued: number;
  /** Longest wait for a place while the queue absorbs a burst, ms; a request not admitted by then is refused. */
  maxWaitMs: number;
  /**
   * Longest wait for a place once the queue has stood (held requests without emptying) for longer than this, ms; at
   * most `maxWaitMs`. Defaults to `maxWaitMs` (one wait bound).
   */
  overloadWaitMs?: number;
  /**
   * Requests one source address may hold on this address at once, served or waiting; one more from it is refused at
   * once. Undefined: no bound. So that one client flooding the address (wrong secrets by the thousand, say) fills
   * its own share of the places and the queue, not everyone's, and clients elsewhere are still admitted.
   */
  maxPerSource?: number;
}

/** The time and timer functions the gate uses (the system's by default; a test passes its own to control time). */
export interface AdmissionClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const SYSTEM_CLOCK: AdmissionClock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    // A pending wait never keeps the process alive on its own.
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** Gives back the place a request held; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  admit: (release: Release) => void;
  timer: unknown;
  /** The source whose share the waiter holds, if counted. */
  source: string | undefined;
}

/** A bounded number of places, a bounded FIFO queue for them and a bounded wait in it (see the module comment). */
export class AdmissionGate {
  private active = 0;
  // A Set keeps insertion order (FIFO) and removes a waiter whose wait ran out in O(1).
  private readonly waiting = new Set<Waiter>();
  /** When the queue last went from empty to holding a request (clock ms); undefined while it is empty. */
  private standingSince: number | undefined;
  private readonly overloadWaitMs: number;
  /** Places and queue places held per source (only with `maxPerSource`); a source holding none has no entry. */
  private readonly bySource = new CountsByKey();

  /**
   * @throws RangeError when `maxInFlight` is below 1, `maxQueued`, `maxWaitMs` or `overloadWaitMs` is negative or not
   *   an integer, or `overloadWaitMs` exceeds `maxWaitMs`.
   */
  constructor(
    readonly limits: AdmissionLimits,
    private readonly clock: AdmissionClock = SYSTEM_CLOCK,
  ) {
    const { maxInFlight, maxQueued, maxWaitMs, overloadWaitMs = maxWaitMs } = limits;
    const integer = (value: number, min: number) => Number.isInteger(value) && value >= min;
    if (!integer(maxInFlight, 1)) throw new RangeError(`maxInFlight must be an integer >= 1, got ${maxInFlight}.`);
    if (!integer(maxQueued, 0)) throw new RangeError(`maxQueued must be an integer >= 0, got ${maxQueued}.`);
    if (!integer(maxWaitMs, 0)) throw new RangeError(`maxWaitMs must be an integer >= 0, got ${maxWaitMs}.`);
    if (!integer(overloadWaitMs, 0) || overloadWaitMs > maxWaitMs) {
      throw new RangeError(`overloadWaitMs must be an integer from 0 to maxWaitMs (${maxWaitMs}), got ${overloadWaitMs}.`);
    }
    if (limits.maxPerSource !== undefined && !integer(limits.maxPerSource, 1)) {
      throw new RangeError(`maxPerSource must be an integer >= 1, got ${limits.maxPerSource}.`);
    }
    this.overloadWaitMs = overloadWaitMs;
  }

  /** Requests holding a place. */
  get inFlight(): number {
    return this.active;
  }

  /** Requests waiting for a place. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Asks for a place: resolves a Release at once when one is free, after a wait when one frees in time (first come,
   * first served; the wait bound is `maxWaitMs`, or `overloadWaitMs` when the queue stands, see the module comment),
   * or undefined (refused) when `source` already holds `maxPerSource` places, the queue is full, the wait runs out or
   * `signal` aborts (the client went away) while waiting. Whoever gets a Release must call it once the request is
   * answered.
   * @param source the client's address, counted against `maxPerSource` (uncounted when undefined).
   */
  admit(signal?: AbortSignal, source?: string): Promise<Release | undefined> {
    if (signal?.aborted === true) return Promise.resolve(undefined);
    const counted = this.limits.maxPerSource === undefined ? undefined : source;
    if (counted !== undefined && this.bySource.get(counted) >= (this.limits.maxPerSource as number)) {
      return Promise.resolve(undefined);
    }
    if (this.active < this.limits.maxInFlight && this.waiting.size === 0) {
      this.active += 1;
      this.hold(counted);
      return Promise.resolve(this.release(counted));
    }
    if (this.waiting.size >= this.limits.maxQueued) return Promise.resolve(undefined);
    this.hold(counted);
    const now = this.clock.now();
    this.standingSince ??= now;
    const waitMs = now - this.standingSince > this.overloadWaitMs ? this.overloadWaitMs : this.limits.maxWaitMs;
    return new Promise((resolve) => {
      const leave = () => {
        this.remove(waiter);
        this.free(counted);
        signal?.removeEventListener('abort', leave);
        resolve(undefined);
      };
      const waiter: Waiter = {
        admit: (release) => {
          signal?.removeEventListener('abort', leave);
          resolve(release);
        },
        timer: this.clock.setTimeout(() => leave(), waitMs),
        source: counted,
      };
      this.waiting.add(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** Takes a waiter out of the queue (admitted, timed out or gone) and stops its timer. */
  private remove(waiter: Waiter): void {
    this.waiting.delete(waiter);
    this.clock.clearTimeout(waiter.timer);
    if (this.waiting.size === 0) this.standingSince = undefined;
  }

  /** Counts one more place held by `source` (none when undefined). */
  private hold(source: string | undefined): void {
    if (source !== undefined) this.bySource.add(source);
  }

  /** Counts one place fewer held by `source`. */
  private free(source: string | undefined): void {
    if (source !== undefined) this.bySource.remove(source);
  }

  /** A Release of one place held by `source`: hands the place to the first waiter, or frees it. */
  private release(source: string | undefined): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.free(source);
      const next = this.waiting.values().next();
      if (next.done === true) {
        this.active -= 1;
        return;
      }
      // The place passes to the first waiter: the count of places in use does not change.
      const waiter = next.value;
      this.remove(waiter);
      waiter.admit(this.release(waiter.source));
    };
  }
}
