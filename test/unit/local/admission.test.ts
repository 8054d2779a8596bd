/**
 * The local gateway's admission gate (functions/local/admission.ts) on a clock the test moves: bounded places, a
 * bounded FIFO queue, a wait that is long for a burst and short once the queue stands, and a queue place given back
 * by a client that goes away.
 */
import { describe, expect, it } from 'vitest';
import { AdmissionGate, type Release } from '../../../functions/local/admission.js';

/** A clock whose time the test sets, and whose timers run when the test moves time past them. */
function manualClock() {
  let time = 0;
  const timers: { at: number; ms: number; callback: () => void; cleared: boolean }[] = [];
  return {
    timers,
    clock: {
      now: () => time,
      setTimeout: (callback: () => void, ms: number) => {
        const timer = { at: time + ms, ms, callback, cleared: false };
        timers.push(timer);
        return timer;
      },
      clearTimeout: (timer: unknown) => {
        (timer as { cleared: boolean }).cleared = true;
      },
    },
    /** Moves time to `to` ms, running every timer due by then. */
    advance(to: number) {
      time = to;
      for (const timer of timers.filter((item) => !item.cleared && item.at <= to)) {
        timer.cleared = true;
        timer.callback();
      }
    },
  };
}

describe('AdmissionGate', () => {
  it('lets a burst wait the long bound, and a newcomer to a queue that has stood longer than the short bound only the short one', async () => {
    const { clock, timers, advance } = manualClock();
    const gate = new AdmissionGate({ maxInFlight: 1, maxQueued: 10, maxWaitMs: 1_000, overloadWaitMs: 250 }, clock);
    const held = (await gate.admit()) as Release;
    const burst = [gate.admit(), gate.admit()];
    advance(200);
    const stillBurst = gate.admit();
    advance(300);
    // The queue has held requests for 300 ms without emptying: overload.
    const late = gate.admit();
    expect(timers.map((timer) => timer.ms)).toEqual([1_000, 1_000, 1_000, 250]);
    expect(gate.queued).toBe(4);
    advance(550);
    expect(await late).toBeUndefined();
    // The first in the queue gets the place the holder gives back.
    held();
    const first = (await burst[0]) as Release;
    expect(first).toBeTypeOf('function');
    expect(gate.inFlight).toBe(1);
    advance(1_000);
    expect(await burst[1]).toBeUndefined();
    advance(1_200);
    expect(await stillBurst).toBeUndefined();
    // Once the queue has emptied, the next one waits the long bound again.
    expect(gate.queued).toBe(0);
    const next = gate.admit();
    expect(timers.at(-1)?.ms).toBe(1_000);
    first();
    expect(await next).toBeTypeOf('function');
  });

  it('refuses at once when the queue is full, and gives a queue place back when the client goes away', async () => {
    const { clock } = manualClock();
    const gate = new AdmissionGate({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 1_000 }, clock);
    const held = (await gate.admit()) as Release;
    const gone = new AbortController();
    const waiting = gate.admit(gone.signal);
    expect(await gate.admit()).toBeUndefined();
    gone.abort();
    expect(await waiting).toBeUndefined();
    expect(gate.queued).toBe(0);
    const next = gate.admit();
    held();
    // Releasing twice gives back one place only.
    held();
    const admitted = (await next) as Release;
    expect(gate.inFlight).toBe(1);
    admitted();
    expect(gate.inFlight).toBe(0);
  });

  it("bounds one source's share, served and waiting, so that a flood from one address leaves room for the others", async () => {
    const { clock, advance } = manualClock();
    const gate = new AdmissionGate({ maxInFlight: 2, maxQueued: 10, maxWaitMs: 1_000, maxPerSource: 3 }, clock);
    /** Whether a request is still waiting (its promise not settled yet). */
    const pending = async (place: Promise<Release | undefined>) => (await Promise.race([place, Promise.resolve('pending')])) === 'pending';
    const flood = [gate.admit(undefined, '127.0.0.2'), gate.admit(undefined, '127.0.0.2'), gate.admit(undefined, '127.0.0.2')];
    // The fourth from the flooding address is refused at once; a device elsewhere still gets a queue place.
    expect(await gate.admit(undefined, '127.0.0.2')).toBeUndefined();
    const device = gate.admit(undefined, '127.0.0.9');
    expect(await pending(device)).toBe(true);
    const [first, second] = (await Promise.all(flood.slice(0, 2))) as Release[];
    expect([gate.inFlight, gate.queued]).toEqual([2, 2]);
    // Places pass in order; a place given back gives its share back.
    first?.();
    const third = (await flood[2]) as Release;
    second?.();
    const admittedDevice = (await device) as Release;
    third();
    admittedDevice();
    expect(gate.inFlight).toBe(0);
    // Waits that run out give their share back too: three new ones from one address wait, a fourth is refused.
    const holders = [(await gate.admit(undefined, '127.0.0.5')) as Release, (await gate.admit(undefined, '127.0.0.6')) as Release];
    const timedOut = [gate.admit(undefined, '127.0.0.3'), gate.admit(undefined, '127.0.0.3')];
    advance(2_000);
    expect(await Promise.all(timedOut)).toEqual([undefined, undefined]);
    const again = [1, 2, 3].map(() => gate.admit(undefined, '127.0.0.3'));
    expect(await pending(again[2] as Promise<Release | undefined>)).toBe(true);
    expect(await gate.admit(undefined, '127.0.0.3')).toBeUndefined();
    for (const release of holders) release();
    for (const place of again.slice(0, 2)) ((await place) as Release)();
    ((await again[2]) as Release)();
    expect([gate.inFlight, gate.queued]).toEqual([0, 0]);
  });

  it('refuses bounds out of range', () => {
    expect(() => new AdmissionGate({ maxInFlight: 0, maxQueued: 1, maxWaitMs: 1 })).toThrow(RangeError);
    expect(() => new AdmissionGate({ maxInFlight: 1, maxQueued: -1, maxWaitMs: 1 })).toThrow(RangeError);
    expect(() => new AdmissionGate({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 100, overloadWaitMs: 200 })).toThrow(RangeError);
    expect(() => new AdmissionGate({ maxInFlight: 1, maxQueued: 1, maxWaitMs: 100, maxPerSource: 0 })).toThrow(RangeError);
  });
});
