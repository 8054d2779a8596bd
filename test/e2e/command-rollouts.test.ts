/**
 * End-to-end over `npm start` (bin/local.ts): command rollouts. Kiosks registered for the test report health whose
 * sub-devices advertise a command (one on a printer and a card terminal, the others on their printer, one nowhere); a
 * preview counts them; a COMMAND rollout in two waves queues the command on each advertising sub-device, the kiosks of
 * wave 1 get it through their pull and report FAILED, which pauses the rollout with its reason; resumed, wave 2's
 * kiosks report SUCCEEDED and it completes; the targets listing shows each target's commands with their states; a
 * cancel cancels what is still QUEUED and leaves what a kiosk fetched; `dss rollout create --command` previews and
 * creates one, `dss rollout targets` prints its targets' commands. Every answer is checked against the OpenAPI
 * document by the harness. The rollout sweeper runs every 200 ms.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, eventually, expectError, useLocalService } from './harness.js';

type Rollout = components['schemas']['Rollout'];
type RolloutTarget = components['schemas']['RolloutTarget'];

const COMPANY = 'acme';
const COMMAND = 'e2e-restart';
const local = useLocalService({
  users: ['alice', 'olivia'],
  ownDynamoDbPort: true,
  environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' },
});

const alice = () => clientFor(local.service, local.tokens.alice);
const params = { params: { path: { companyId: COMPANY } } };
const tokens = new Map<string, string>();

/** A sub-device of a test kiosk's health, advertising `commands`. */
function subDevice(uid: string, type: 'PRINTER' | 'PAYMENT', commands: string[]) {
  return {
    uid,
    label: uid,
    version: '1.0.0',
    health: { state: 'NOMINAL', message: 'OK', messages: [] },
    capability: { type, modes: [] },
    commands: commands.map((command) => ({ command, title: command, description: `Runs ${command}.`, payload: {}, arguments: [] })),
  };
}

/**
 * Registers kiosks `{prefix}-1`…`-5` reporting version code `code`: the first advertises COMMAND on its printer and its
 * card terminal, the fifth advertises only `beep`, the others COMMAND on their printer. @returns their ids, sorted.
 */
async function commandFleet(prefix: string, code: string): Promise<string[]> {
  const ids = [1, 2, 3, 4, 5].map((n) => `${prefix}-${n}`);
  expectOk(
    await alice().main.POST('/companies/{companyId}/resources/devices', { ...params, body: ids.map((id) => ({ id, serial: `SN-${id}` })) }),
  );
  for (const [index, id] of ids.entries()) {
    const printer = subDevice('printer', 'PRINTER', index === 4 ? ['beep'] : [COMMAND]);
    const devices = index === 0 ? [printer, subDevice('terminal', 'PAYMENT', [COMMAND])] : [printer];
    const hub = { uid: 'hub', label: 'Main hub', version: '1.0.0', registeredSince: '2026-01-01T00:00:00Z', type: 'USB', devices };
    const { token } = await deviceToken({ ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint }, COMPANY, id);
    const health = { versionCode: code, versionName: '1.0', mode: 'SERVER', hubs: [hub] };
    expect((await clientFor(local.service, token).main.PUT('/device/health', { body: health as never })).response.status).toBe(204);
    tokens.set(id, token);
  }
  return ids;
}

/** The rollout now. */
async function rolloutOf(rolloutId: string): Promise<Rollout> {
  return expectOk(
    await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId } },
    }),
  );
}

/** The rollout once `done` says it is. */
async function rolloutWhen(rolloutId: string, done: (rollout: Rollout) => boolean, what: string): Promise<Rollout> {
  let rollout = await rolloutOf(rolloutId);
  await eventually(
    async () => {
      rollout = await rolloutOf(rolloutId);
      return done(rollout);
    },
    what,
    30_000,
  );
  return rollout;
}

/** Every target of the rollout, following the cursors. */
async function targetsOf(rolloutId: string, query: { commandState?: 'FAILED' | 'SUCCEEDED'; cause?: 'COMMAND_NOT_ADVERTISED' } = {}) {
  const items: RolloutTarget[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
        params: { path: { companyId: COMPANY, rolloutId }, query: { ...query, ...(cursor === undefined ? {} : { cursor }) } },
      }),
    );
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/** The kiosk's pending commands, once its pull lists `count` of them (fetching them makes them DELIVERED). */
async function pulled(deviceId: string, count: number): Promise<{ id: string; device: string; command: string }[]> {
  const kiosk = clientFor(local.service, tokens.get(deviceId));
  let commands: { id: string; device: string; command: string }[] = [];
  await eventually(
    async () => {
      commands = (await kiosk.main.GET('/device/deployments', { params: { header: {} } })).data?.commands ?? [];
      return commands.length === count;
    },
    `${count} commands in the pull of ${deviceId}`,
    30_000,
  );
  return commands;
}

/** The kiosk reports each of its pending commands (`count` of them) with `state`. */
async function answer(deviceId: string, count: number, state: 'SUCCEEDED' | 'FAILED', message: string): Promise<void> {
  const kiosk = clientFor(local.service, tokens.get(deviceId));
  for (const command of await pulled(deviceId, count)) {
    const reported = await kiosk.main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: command.id } },
      body: { state, message },
    });
    expect(reported.response.status).toBe(204);
  }
}

let ids: string[];

beforeAll(async () => {
  ids = await commandFleet('acme-cmdroll', 'cmdroll-1');
}, 180_000);

describe('a command rollout', () => {
  it('is previewed: who advertises the command, by sub-device type, nothing created', async () => {
    const body = { action: 'COMMAND' as const, command: { command: COMMAND }, targets: { ids: [...ids, 'acme-cmdroll-none'] }, waves: [2] };
    const preview = expectOk(await alice().main.POST('/companies/{companyId}/resources/rollouts/preview', { ...params, body }));
    expect(preview).toEqual({
      dryRun: true,
      action: 'COMMAND',
      targets: 6,
      waves: [2, 4],
      command: { advertising: 4, notAdvertising: 1, notFound: 1, commands: 5, bySubDeviceType: { PRINTER: 4, PAYMENT: 1 } },
    });
    // A viewer may not run commands, nor create rollouts.
    expectError(
      await clientFor(local.service, local.tokens.olivia).main.POST('/companies/{companyId}/resources/rollouts', { ...params, body }),
      403,
    );
  });

  it('pauses after a wave whose commands FAILED above the threshold, goes on when resumed, and lists each target’s commands', async () => {
    const created = await alice().main.POST('/companies/{companyId}/resources/rollouts', {
      ...params,
      body: {
        action: 'COMMAND',
        command: { command: COMMAND, arguments: { graceSeconds: 5 }, expiresInSeconds: 600 },
        targets: { ids },
        waves: [2],
        failureThreshold: 0.5,
        note: 'restart the fleet',
      },
    });
    expect(created.response.status).toBe(202);
    const rollout = expectOk(created);
    expect(rollout).toMatchObject({
      action: 'COMMAND',
      command: { command: COMMAND, arguments: { graceSeconds: 5 }, expiresInSeconds: 600 },
    });
    // Wave 1: the first kiosk's two commands FAILED, the second's one SUCCEEDED: 2 of 3, above 50 %.
    await answer(ids[0] as string, 2, 'FAILED', 'Printer jammed.');
    await answer(ids[1] as string, 1, 'SUCCEEDED', 'Restarted.');
    const paused = await rolloutWhen(rollout.id, (now) => now.state === 'PAUSED', 'the rollout PAUSED after wave 1');
    expect(paused.pausedReason).toBe(
      'Wave 1: 2 of 3 commands FAILED or EXPIRED (66.7 %), above the failure threshold of 50 %. Resume to go on with wave 2, or cancel.',
    );
    expect(paused.waves[0]?.counts).toEqual({ SUCCESS: 2, COMMANDS: 3, FAILED: 2, SUCCEEDED: 1 });
    expect(paused.waves[1]?.state).toBe('PENDING');
    // Nothing of wave 2 was queued while paused.
    expect(
      (await clientFor(local.service, tokens.get(ids[2] as string)).main.GET('/device/deployments', { params: { header: {} } })).data
        ?.commands,
    ).toEqual([]);

    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/resume', {
        params: { path: { companyId: COMPANY, rolloutId: rollout.id } },
      }),
    );
    await answer(ids[2] as string, 1, 'SUCCEEDED', 'Restarted.');
    await answer(ids[3] as string, 1, 'SUCCEEDED', 'Restarted.');
    const completed = await rolloutWhen(rollout.id, (now) => now.state === 'COMPLETED', 'the rollout COMPLETED');
    expect(completed.waves[1]?.counts).toEqual({ SUCCESS: 2, COMMANDS: 2, SUCCEEDED: 2, COMMAND_NOT_ADVERTISED: 1 });

    const targets = await targetsOf(rollout.id);
    expect(targets.map((target) => [target.deviceId, target.wave, target.result.state, target.result.cause])).toEqual([
      [ids[0], 1, 'SUCCESS', null],
      [ids[1], 1, 'SUCCESS', null],
      [ids[2], 2, 'SUCCESS', null],
      [ids[3], 2, 'SUCCESS', null],
      [ids[4], 2, 'FAILURE', 'COMMAND_NOT_ADVERTISED'],
    ]);
    expect(targets[0]?.commands?.map((command) => [command.subId, command.state, command.message]).sort()).toEqual([
      ['hub/printer', 'FAILED', 'Printer jammed.'],
      ['hub/terminal', 'FAILED', 'Printer jammed.'],
    ]);
    expect(targets[4]?.commands).toEqual([]);
    expect((await targetsOf(rollout.id, { commandState: 'FAILED' })).map((target) => target.deviceId)).toEqual([ids[0]]);
    expect((await targetsOf(rollout.id, { cause: 'COMMAND_NOT_ADVERTISED' })).map((target) => target.deviceId)).toEqual([ids[4]]);
    // Each is an ordinary command of its device, run by the rollout's creator.
    const listed = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', {
        params: { path: { companyId: COMPANY, deviceId: ids[1] as string } },
      }),
    );
    expect(listed.items[0]).toMatchObject({
      command: COMMAND,
      by: 'alice',
      rolloutId: rollout.id,
      note: 'restart the fleet',
      state: 'SUCCEEDED',
    });
  });

  it('is previewed and created with `dss rollout create --command`, its targets printed with their commands', async () => {
    const cli = await dssUser(local.service);
    const login = await runDss(cli, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
    expect(login.code, login.stderr).toBe(0);
    const targets = ['--devices', `${ids[0]},${ids[4]}`];
    const preview = await runDss(cli, ['rollout', 'create', '--command', COMMAND, ...targets, '--preview']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('Preview: nothing was created. 2 devices in 1 wave(s): 2.');
    expect(preview.stdout).toMatch(/notAdvertising\s*│\s*1 \(each a FAILURE: COMMAND_NOT_ADVERTISED\)/);
    expect(preview.stdout).toMatch(/PAYMENT\s*│\s*1/);
    const created = await dssJson<Rollout>(cli, [
      'rollout',
      'create',
      '--command',
      COMMAND,
      '--arguments',
      '{"graceSeconds":1}',
      '--expires-in',
      '10m',
      ...targets,
    ]);
    expect(created).toMatchObject({
      action: 'COMMAND',
      command: { command: COMMAND, arguments: { graceSeconds: 1 }, expiresInSeconds: 600 },
    });
    await answer(ids[0] as string, 2, 'FAILED', 'Out of paper.');
    await eventually(async () => (await targetsOf(created.id, { commandState: 'FAILED' })).length === 1, 'the failures listed');
    const printed = await runDss(cli, ['rollout', 'targets', created.id, '--command-state', 'FAILED', '--all']);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('hub/printer FAILED: Out of paper.');
    const usage = await runDss(cli, ['rollout', 'create', 'acme-welcome@1.1.0', '--command', COMMAND, ...targets]);
    expect(usage.code).toBe(2);
  });

  it('cancelled, cancels the commands still QUEUED and leaves those a kiosk fetched', async () => {
    const rollout = expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts', {
        ...params,
        body: { action: 'COMMAND', command: { command: COMMAND }, targets: { ids: [ids[1] as string, ids[2] as string] } },
      }),
    );
    // The first kiosk fetches its command (DELIVERED); the second does not pull.
    const [fetched] = await pulled(ids[1] as string, 1);
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: COMPANY, rolloutId: rollout.id } },
      }),
    );
    await eventually(async () => (await targetsOf(rollout.id))[1]?.commands?.[0]?.state === 'CANCELLED', 'the QUEUED command CANCELLED');
    const targets = await targetsOf(rollout.id);
    expect(targets.map((target) => target.commands?.map((command) => command.state))).toEqual([['DELIVERED'], ['CANCELLED']]);
    expect(targets[0]?.commands?.[0]?.id).toBe(fetched?.id);
    // The cancel is counted for the wave from the commands' stream, moments later.
    const cancelled = await rolloutWhen(rollout.id, (now) => now.waves[0]?.counts.CANCELLED === 1, 'the cancel counted');
    expect(cancelled.state).toBe('CANCELLED');
    expect(cancelled.waves[0]?.counts).toEqual({ SUCCESS: 2, COMMANDS: 2, CANCELLED: 1 });
  });
});
