/**
 * A local user's sign-in (functions/core/access/user-tokens.ts) on the real LocalIdentityProvider: the password's hash runs
 * in the process's verification gate and is counted per username and address like a device secret; refusals are
 * problem+json (401, 429 and 503 with Retry-After). An injected clock, no timing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, LocalIdentityProvider, USERS_FILE } from '../../../functions/adapters/embedded/local-identity-provider.js';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import type { HashSlot, IdentityProvider, SignInRequest } from '../../../functions/core/access/ports.js';
import { signInUser } from '../../../functions/core/access/user-tokens.js';
import { DomainError } from '../../../functions/core/shared/errors.js';
import { problemHeadersOf, statusOf } from '../../../functions/platform/problem.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const T0 = Date.parse('2026-01-02T03:04:05.000Z');
const PASSWORD = 'alice-password';

let directory: string;
let provider: LocalIdentityProvider;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-user-tokens-'));
  await writeFile(
    join(directory, USERS_FILE),
    JSON.stringify([{ username: 'alice', passwordHash: await hashPassword(PASSWORD), companies: ['acme'], scope: 'devices:read' }]),
  );
  provider = await LocalIdentityProvider.fromDirectory(directory, { issuer: 'https://issuer.test', audience: 'dss' });
});

afterAll(() => rm(directory, { recursive: true, force: true }));

/** The provider behind a gate (2 attempts of each class) that records the gate's state during each hash. */
function world() {
  let now = T0;
  const gate = new BoundedVerificationGate({ maxAdmitted: { trusted: 2, suspect: 2 } });
  const runningDuringHash: number[] = [];
  const identity: IdentityProvider = {
    signIn: (request: SignInRequest, slot?: HashSlot) =>
      provider.signIn(request, (hash) =>
        (slot as HashSlot)(() => {
          runningDuringHash.push(gate.stats().running);
          return hash();
        }),
      ),
    refresh: (token) => provider.refresh(token),
    revoke: (token) => provider.revoke(token),
  };
  const failures = new InMemoryClientFailureStore();
  const dependencies = { identity, gate, failures, policy: DEFAULT_CLIENT_FAILURE_POLICY, now: () => now };
  /** The status and Retry-After the token endpoint would answer (problem+json for every refusal). */
  const signIn = async (password: string, source: string, username = 'alice') => {
    try {
      await signInUser(dependencies, { username, password, source });
      return { status: 200 };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const retryAfter = problemHeadersOf(error)['Retry-After'];
      return { status: statusOf(error), ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }) };
    }
  };
  return { gate, failures, runningDuringHash, signIn, advance: (ms: number) => (now += ms) };
}

describe('a local sign-in', () => {
  it('hashes the password in a slot of the verification gate, and leaves it', async () => {
    const w = world();
    expect(await w.signIn(PASSWORD, '198.51.100.7')).toEqual({ status: 200 });
    expect(await w.signIn('wrong', '198.51.100.7')).toEqual({ status: 401 });
    expect(w.runningDuringHash).toEqual([1, 1]);
    expect(w.gate.stats()).toEqual({ admitted: { trusted: 0, suspect: 0 }, running: 0, waiting: 0 });
  });

  it('answers 429 with Retry-After after 5 wrong passwords from an address, to the right one too, with no hash; not elsewhere', async () => {
    const w = world();
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expect(await w.signIn(`wrong-${attempt}`, '203.0.113.9')).toEqual({ status: 401 });
      w.advance(10_000);
    }
    expect(await w.signIn(PASSWORD, '203.0.113.9')).toEqual({ status: 429, retryAfter: 250 });
    expect(w.runningDuringHash).toHaveLength(5);
    expect(await w.signIn(PASSWORD, '198.51.100.7')).toEqual({ status: 200 });
    // Unknown usernames are counted alike, under their own key.
    for (let attempt = 1; attempt <= 5; attempt += 1) expect(await w.signIn('x', '203.0.113.9', 'mallory')).toEqual({ status: 401 });
    expect(await w.signIn('x', '203.0.113.9', 'mallory')).toMatchObject({ status: 429 });
    w.advance(250_000);
    expect(await w.signIn(PASSWORD, '203.0.113.9')).toEqual({ status: 200 });
  });

  it("counts a user's failures across the spellings of their username, which is case-insensitive", async () => {
    const w = world();
    for (const spelling of ['Alice', 'aLice', 'alIce', 'aliCe', 'alicE']) {
      expect(await w.signIn('wrong', '203.0.113.9', spelling)).toEqual({ status: 401 });
    }
    expect(await w.signIn(PASSWORD, '203.0.113.9', 'ALICE')).toMatchObject({ status: 429 });
    expect(await w.signIn(PASSWORD, '198.51.100.7', 'ALICE')).toEqual({ status: 200 });
  });

  it('counts simultaneous sign-ins before their hashes: 5 of 12 are checked, the others get 429', async () => {
    const failures = new InMemoryClientFailureStore();
    const dependencies = { identity: provider, gate: new BoundedVerificationGate(), failures, policy: DEFAULT_CLIENT_FAILURE_POLICY };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        signInUser(dependencies, { username: 'alice', password: 'wrong', source: '203.0.113.9' }).catch((error: DomainError) =>
          statusOf(error),
        ),
      ),
    );
    expect(answers.filter((status) => status === 401)).toHaveLength(5);
    expect(answers.filter((status) => status === 429)).toHaveLength(7);
  });

  it('answers 503 with Retry-After 1, before any count or hash, when the gate admits no more attempts', async () => {
    const w = world();
    const full = new BoundedVerificationGate({ maxAdmitted: { trusted: 0, suspect: 0 } });
    const error = await signInUser(
      { identity: provider, gate: full, failures: w.failures, policy: DEFAULT_CLIENT_FAILURE_POLICY },
      { username: 'alice', password: PASSWORD, source: '198.51.100.7' },
    ).catch((caught: DomainError) => caught);
    expect([statusOf(error as DomainError), problemHeadersOf(error as DomainError)['Retry-After']]).toEqual([503, '1']);
    expect(w.failures.calls).toEqual([]);
  });
});
