/**
 * DynamoDB Local under `npm start` (bin/local.ts): when its JVM dies, requests answer 503 with Retry-After (not 500,
 * not a hang) and the runtime restarts it on the same data, so the same request answers 200 again without a restart
 * of the service; and when the runtime itself is killed (SIGKILL), the JVM, which listens on every interface, does
 * not outlive it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { answerOf, clientFor, isRunning, useLocalService } from './harness.js';

const local = useLocalService({
  users: ['alice'],
  ownDynamoDbPort: true,
  // Whatever a failed assertion left behind.
  afterStop: (settings) => {
    for (const pid of dynamoDbJvms(settings.dataDirectory)) process.kill(pid, 'SIGKILL');
  },
});

/** Pids of the java processes running DynamoDB Local on `dataDirectory` (their command line names its -dbPath). */
function dynamoDbJvms(dataDirectory: string): number[] {
  const dbPath = join(dataDirectory, 'dynamodb');
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (/java$/.test(argv[0] ?? '') && argv.includes(dbPath)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused. */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 100));
  }
  return true;
}

describe('DynamoDB Local supervision', () => {
  it('a killed JVM: 503 with Retry-After while it is down, restarted on the same data, 200 again within 30 s', async () => {
    const listing = async () =>
      answerOf(
        await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
          params: { path: { companyId: 'acme' } },
        }),
      );
    expect((await listing()).status).toBe(200);
    const [jvm] = dynamoDbJvms(local.settings.dataDirectory);
    expect(jvm, 'no DynamoDB Local JVM found').toBeTypeOf('number');

    process.kill(jvm as number, 'SIGKILL');
    expect(await waitFor(() => !isRunning(jvm as number), 5_000)).toBe(true);
    const started = Date.now();
    const down = await listing();
    // Answered, not left hanging: the bound is loose, since the SDK's retries and the JVM's restart share a busy machine.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(down.status, JSON.stringify(down.body)).toBe(503);
    expect(down.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(down.body).toMatchObject({ status: 503, title: 'Service Unavailable' });

    let last = down;
    const back = await waitFor(async () => {
      last = await listing();
      expect([200, 503], JSON.stringify(last.body)).toContain(last.status);
      return last.status === 200;
    }, 30_000);
    expect(back, `still ${last.status} after 30 s:\n${local.service.output()}`).toBe(true);
    // The same data: alice still sees the seeded companies' data (the catalog of acme is not empty).
    const scenarios = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/scenarios', {
        params: { path: { companyId: 'acme' } },
      }),
    );
    expect(scenarios.items.map((scenario) => scenario.id)).toContain('acme-welcome');
    expect(local.service.output()).toMatch(/DynamoDB Local exited unexpectedly \(signal SIGKILL\); restarting on the same data/);
    const restarted = dynamoDbJvms(local.settings.dataDirectory);
    expect(restarted).toHaveLength(1);
    expect(restarted[0]).not.toBe(jvm);
  }, 60_000);

  it('a killed runtime (SIGKILL) takes its JVM with it: gone within a few seconds, its port refusing connections', async () => {
    const [jvm] = dynamoDbJvms(local.settings.dataDirectory);
    expect(jvm, 'no DynamoDB Local JVM found').toBeTypeOf('number');
    expect(await refuses(local.dynamoDbPort)).toBe(false);

    process.kill(local.service.pid, 'SIGKILL');
    expect(await waitFor(() => !isRunning(jvm as number), 8_000), 'the JVM outlived the runtime').toBe(true);
    expect(await refuses(local.dynamoDbPort)).toBe(true);
    expect(dynamoDbJvms(local.settings.dataDirectory)).toEqual([]);
  }, 30_000);
});
