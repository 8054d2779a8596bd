/**
 * BoundedVerificationGate (functions/adapters/verification-gate.ts): at most `concurrency` hashes at once, a bounded
 * number of attempts under way per class, and trusted attempts hashed before suspect ones. Hashes are deferred
 * promises the test settles; the clock is injected.
 */
import { describe, expect, it } from 'vitest';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import type { VerificationPass } from '../../../functions/core/access/ports.js';

/** A hash the test finishes by hand; `started` lists the names of those that began, in order. */
function hashes() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const hash = (name: string) => () =>
    new Promise<boolean>((done) => {
      started.push(name);
      finish.set(name, () => done(false));
    });
  const end = async (name: string) => {
    finish.get(name)?.();
    // Let the gate hand the slot over (promise continuations).
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
  };
  return { started, hash, end };
}

const settle = async () => {
  for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
};

describe('BoundedVerificationGate', () => {
  it('runs at most `concurrency` hashes at once; each finished one starts the next', async () => {
    const gate = new BoundedVerificationGate({ concurrency: 2 });
    const { started, hash, end } = hashes();
    for (const name of ['a', 'b', 'c', 'd']) void gate.enter(`10.0.0.${name.charCodeAt(0)}`)?.verify(hash(name), false);
    await settle();
    expect(started).toEqual(['a', 'b']);
    await end('a');
    expect(started).toEqual(['a', 'b', 'c']);
    await end('c');
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.stats().running).toBe(2);
  });

  it('hashes every waiting trusted attempt before any suspect one, whatever their order of arrival', async () => {
    const gate = new BoundedVerificationGate({ concurrency: 1 });
    const { started, hash, end } = hashes();
    void gate.enter('10.0.0.1')?.verify(hash('first'), false);
    void gate.enter('10.0.0.2')?.verify(hash('flood-1'), true);
    void gate.enter('10.0.0.2')?.verify(hash('flood-2'), true);
    void gate.enter('10.0.0.3')?.verify(hash('device'), false);
    await settle();
    await end('first');
    await end('device');
    await end('flood-1');
    expect(started).toEqual(['first', 'device', 'flood-1', 'flood-2']);
  });

  it('makes a source suspect for `suspectForMs` after a failure, and when it has `trustedPerSource` attempts under way', async () => {
    let now = 0;
    const gate = new BoundedVerificationGate({ concurrency: 1, trustedPerSource: 2, suspectForMs: 1_000, now: () => now });
    const { started, hash, end } = hashes();
    // A source that failed a moment ago waits behind one that did not, though it came first.
    gate.enter('10.0.0.9')?.leave(true);
    const passes = [
      ['10.0.0.5', 'busy'],
      ['10.0.0.9', 'failed-recently'],
      ['10.0.0.1', 'clean'],
    ].map(([source, name]) => {
      const pass = gate.enter(source as string) as VerificationPass;
      void pass.verify(hash(name as string), false);
      return pass;
    });
    await settle();
    await end('busy');
    expect(started).toEqual(['busy', 'clean']);
    await end('clean');
    await end('failed-recently');
    for (const pass of passes) pass.leave(false);
    // Its failure forgotten after suspectForMs, it is trusted again.
    now = 1_001;
    expect(gate.stats().admitted).toEqual({ trusted: 0, suspect: 0 });
    const again = gate.enter('10.0.0.9') as VerificationPass;
    expect(gate.stats().admitted).toEqual({ trusted: 1, suspect: 0 });
    // Two under way from one source: its third is suspect.
    gate.enter('10.0.0.9');
    gate.enter('10.0.0.9');
    expect(gate.stats().admitted).toEqual({ trusted: 2, suspect: 1 });
    again.leave(false);
  });

  it('admits at most maxAdmitted attempts of a class; leaving one admits the next; a flood does not take the trusted share', () => {
    const gate = new BoundedVerificationGate({ trustedPerSource: 1, maxAdmitted: { trusted: 2, suspect: 3 } });
    const flood: (VerificationPass | undefined)[] = [];
    for (let attempt = 0; attempt < 10; attempt += 1) flood.push(gate.enter('203.0.113.9'));
    // One trusted (the first of its source), then three suspect, then refusals.
    expect(flood.filter((pass) => pass !== undefined)).toHaveLength(4);
    expect(gate.stats().admitted).toEqual({ trusted: 1, suspect: 3 });
    expect(gate.enter('198.51.100.7')).toBeDefined();
    expect(gate.enter('198.51.100.8')).toBeUndefined();
    flood[1]?.leave(false);
    expect(gate.enter('203.0.113.9')).toBeDefined();
  });

  it('counts a pass out once, however often it is left', () => {
    const gate = new BoundedVerificationGate({ maxAdmitted: { trusted: 2, suspect: 0 } });
    const first = gate.enter('10.0.0.1') as VerificationPass;
    gate.enter('10.0.0.2');
    first.leave(false);
    first.leave(false);
    expect(gate.stats().admitted).toEqual({ trusted: 1, suspect: 0 });
    expect(gate.enter('10.0.0.3')).toBeDefined();
    expect(gate.enter('10.0.0.4')).toBeUndefined();
  });
});
