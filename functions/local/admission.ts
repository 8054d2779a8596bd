/**
 * Admission control of one local address: at most `maxInFlight` requests are served at once (token check, body,
 * handler), at most `maxQueued` more wait for a place, each at most `maxWaitMs`; a request that finds the queue full,
 * or whose wait runs out, is refused at once. Locally every handler runs on the one event loop of the runtime, so
 * admitting more work than the CPU serves does not serve more: it makes every request slower (Little's law: the time
 * in the system grows with the work in it) until the embedded backends' clients time out. Refusing early keeps the
 * admitted requests fast and tells the others when to come back.
 *
 * Written here rather than on p-limit (a dependency): p-limit cannot withdraw a queued task whose wait ran out, so an
 * abandoned request would keep its place in the queue and count against the queue's bound until its turn came.
 */

/** The bounds of one address. */
export interface AdmissionLimits {
  /** Requests served at once; at least 1. */
  maxInFlight: number;
  /** Requests waiting for a place; 0 refuses every request that finds no free place. */
  maxQueued: number;
  /** Longest wait for a place, ms; a request not admitted by then is refused. */
  maxWaitMs: number;
}

/** The timer functions the gate uses (the global ones by default; a test passes its own to control time). */
export interface AdmissionClock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const SYSTEM_CLOCK: AdmissionClock = {
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
}

/** A bounded number of places, a bounded FIFO queue for them and a bounded wait in it (see the module comment). */
export class AdmissionGate {
  private active = 0;
  // A Set keeps insertion order (FIFO) and removes a waiter whose wait ran out in O(1).
  private readonly waiting = new Set<Waiter>();

  /**
   * @throws RangeError when `maxInFlight` is below 1, or `maxQueued` or `maxWaitMs` is negative or not an integer.
   */
  constructor(
    readonly limits: AdmissionLimits,
    private readonly clock: AdmissionClock = SYSTEM_CLOCK,
  ) {
    const { maxInFlight, maxQueued, maxWaitMs } = limits;
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be an integer >= 1, got ${maxInFlight}.`);
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`maxQueued must be an integer >= 0, got ${maxQueued}.`);
    if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0) throw new RangeError(`maxWaitMs must be an integer >= 0, got ${maxWaitMs}.`);
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
   * Asks for a place: resolves a Release at once when one is free, after a wait when one frees within `maxWaitMs`
   * (first come, first served), or undefined (refused) when the queue is full, the wait runs out or `signal` aborts
   * (the client went away) while waiting. Whoever gets a Release must call it once the request is answered.
   */
  admit(signal?: AbortSignal): Promise<Release | undefined> {
    if (signal?.aborted === true) return Promise.resolve(undefined);
    if (this.active < this.limits.maxInFlight && this.waiting.size === 0) {
      this.active += 1;
      return Promise.resolve(this.release());
    }
    if (this.waiting.size >= this.limits.maxQueued) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const leave = () => {
        this.waiting.delete(waiter);
        this.clock.clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', leave);
        resolve(undefined);
      };
      const waiter: Waiter = {
        admit: (release) => {
          signal?.removeEventListener('abort', leave);
          resolve(release);
        },
        timer: this.clock.setTimeout(() => leave(), this.limits.maxWaitMs),
      };
      this.waiting.add(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** A Release of one place: hands it to the first waiter, or frees it. */
  private release(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.values().next();
      if (next.done === true) {
        this.active -= 1;
        return;
      }
      // The place passes to the first waiter: the count of places in use does not change.
      const waiter = next.value;
      this.waiting.delete(waiter);
      this.clock.clearTimeout(waiter.timer);
      waiter.admit(this.release());
    };
  }
}
