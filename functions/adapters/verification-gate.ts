/**
 * The VerificationGate of one process: how many secret hashes run at once, how many attempts may be under way, and
 * which go first. Device secrets (and, locally, users' passwords) are checked with scrypt (about 10 ms of CPU each,
 * 40 ms for a password) on libuv's thread pool, 4 threads by default, which also serves file and DNS work: without a
 * bound, 1,000 wrong attempts arriving together queue every other request behind seconds of hashing. It bounds this
 * process only: on AWS each function instance serves one request at a time, so there the per-key bound is the
 * ClientFailureStore's reservation, never this gate.
 *
 * An attempt is `suspect` when its source failed recently (in this process) or already has `trustedPerSource`
 * attempts under way; otherwise `trusted`. Trusted attempts are admitted up to `maxAdmitted.trusted` and hashed
 * first; suspect ones up to `maxAdmitted.suspect`, after every trusted one waiting. So a flood from one address
 * fills its own small share and is refused quickly past it, while a device on another address waits for at most the
 * hashes already running and the few trusted attempts ahead of it.
 */
import { LRUCache } from 'lru-cache';
import type { VerificationGate, VerificationPass } from '../core/access/ports.js';
import { CountsByKey } from './counts-by-key.js';

/** Settings of a BoundedVerificationGate. */
export interface VerificationGateOptions {
  /** Hashes running at once. */
  concurrency: number;
  /** Attempts admitted and not left, at most, per class; past it `enter` answers undefined. */
  maxAdmitted: { trusted: number; suspect: number };
  /** Attempts of one source under way beyond which its next ones are suspect. */
  trustedPerSource: number;
  /** How long a source stays suspect after a failure, ms. */
  suspectForMs: number;
  /** Sources with a recent failure remembered at most (the least recently failed are forgotten first). */
  maxSuspectSources: number;
  /** The clock, epoch ms. @default Date.now */
  now?: () => number;
}

/**
 * The defaults, for a Lambda function or the local runtime. 2 hashes at once: half of libuv's 4 threads, so file and
 * DNS work keeps the other half, and as many as the CPU a 512 MB function (or a small host) runs in parallel anyway.
 * 64 trusted attempts under way: at about 10 ms a hash, 2 at a time, the last waits about 0.3 s. 8 suspect ones:
 * enough to keep both hashes busy between a flood's reads and writes, past that it is told to come back (503,
 * Retry-After) at the cost of a parsed request, no I/O. A source with a failure in the
 * last 5 minutes (the failure window) is suspect, and so is one with 16 attempts under way: devices behind one
 * address (a shop's router) rarely ask for 16 tokens at the same moment, a flood from one address does from its
 * first instant, before any of its failures is known.
 */
export const DEFAULT_GATE_OPTIONS: Readonly<VerificationGateOptions> = {
  concurrency: 2,
  maxAdmitted: { trusted: 64, suspect: 8 },
  trustedPerSource: 16,
  suspectForMs: 300_000,
  maxSuspectSources: 10_000,
};

type Class = 'trusted' | 'suspect';

/** A VerificationGate in memory (see the module comment). */
export class BoundedVerificationGate implements VerificationGate {
  private readonly options: VerificationGateOptions;
  private readonly now: () => number;
  private readonly admitted: Record<Class, number> = { trusted: 0, suspect: 0 };
  private readonly bySource = new CountsByKey();
  /** Source → until when it is suspect (epoch ms). */
  private readonly failedUntil: LRUCache<string, number>;
  private running = 0;
  /** Hashes waiting for a slot, trusted ones first. */
  private readonly waiting: Record<Class, (() => void)[]> = { trusted: [], suspect: [] };

  constructor(options: Partial<VerificationGateOptions> = {}) {
    this.options = { ...DEFAULT_GATE_OPTIONS, ...options };
    this.now = options.now ?? Date.now;
    this.failedUntil = new LRUCache({ max: this.options.maxSuspectSources });
  }

  /** Attempts admitted and not left, by class; hashes running and waiting. */
  stats(): { admitted: Record<Class, number>; running: number; waiting: number } {
    return {
      admitted: { ...this.admitted },
      running: this.running,
      waiting: this.waiting.trusted.length + this.waiting.suspect.length,
    };
  }

  enter(source: string): VerificationPass | undefined {
    const failedUntil = this.failedUntil.get(source);
    const underWay = this.bySource.get(source);
    const entered: Class =
      (failedUntil !== undefined && failedUntil > this.now()) || underWay >= this.options.trustedPerSource ? 'suspect' : 'trusted';
    if (this.admitted[entered] >= this.options.maxAdmitted[entered]) return undefined;
    this.admitted[entered] += 1;
    this.bySource.add(source);
    let left = false;
    return {
      verify: (check, suspect) => this.run(check, suspect ? 'suspect' : entered),
      leave: (failed) => {
        if (left) return;
        left = true;
        this.admitted[entered] -= 1;
        this.bySource.remove(source);
        if (failed) this.failedUntil.set(source, this.now() + this.options.suspectForMs);
      },
    };
  }

  private async run<T>(check: () => Promise<T>, priority: Class): Promise<T> {
    if (this.running >= this.options.concurrency) {
      await new Promise<void>((start) => this.waiting[priority].push(start));
    } else {
      this.running += 1;
    }
    try {
      return await check();
    } finally {
      // The slot passes to the next waiting hash (trusted first) without being freed in between.
      const next = this.waiting.trusted.shift() ?? this.waiting.suspect.shift();
      if (next !== undefined) next();
      else this.running -= 1;
    }
  }
}
