/**
 * COMMAND rollouts below the HTTP layer, on DynamoDB Local: the real rollout, command and device repositories (their
 * conditional puts, transactions and batched reads), a queue that records what is sent, and an injected clock. Device
 * results go through the command changes path (commandChangeOf, applyCommandChanges with the rollout's counting hook),
 * as the commands table's stream consumer runs it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbCommandRepository } from '../../../functions/adapters/aws/dynamodb-command-repository.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { DynamoDbRolloutRepository } from '../../../functions/adapters/aws/dynamodb-rollout-repository.js';
import { applyCommandChanges, commandChangeOf } from '../../../functions/core/commands/changes.js';
import type { Command, CommandState } from '../../../functions/core/commands/model.js';
import type { Device, SubDevice } from '../../../functions/core/devices/model.js';
import { cancelRolloutCommands, countRolloutCommand } from '../../../functions/core/rollouts/command-work.js';
import { joinContinuousRollouts } from '../../../functions/core/rollouts/continuous.js';
import { createRollout } from '../../../functions/core/rollouts/create.js';
import type { RolloutCreateInput, RolloutQueueMessage, RolloutWorkMessage } from '../../../functions/core/rollouts/model.js';
import type { RolloutDependencies, RolloutRepository } from '../../../functions/core/rollouts/ports.js';
import { previewRollout } from '../../../functions/core/rollouts/preview.js';
import { getRollout } from '../../../functions/core/rollouts/reads.js';
import { sweepRollouts } from '../../../functions/core/rollouts/sweeper.js';
import { listRolloutTargets } from '../../../functions/core/rollouts/target-results.js';
import { cancelRollout, resumeRollout } from '../../../functions/core/rollouts/transitions.js';
import { runRolloutChunk } from '../../../functions/core/rollouts/worker.js';
import { deviceDocumentOf } from '../../../functions/core/search/documents.js';
import { BadRequestError, ForbiddenError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';
import { everyVersionExists, RecordingQueue } from '../../support/rollout-fixtures.js';

const DAY = 24 * 60 * 60_000;
const START = Date.parse('2031-06-01T08:00:00.000Z');

let client: DynamoDBDocumentClient;
let clock: Date;
let company: string;
let companyCount = 0;
let queue: RecordingQueue<RolloutQueueMessage>;
let rollouts: RolloutRepository;
let commands: DynamoDbCommandRepository;
let devices: DynamoDbDeviceRepository;
let cursors: CursorCodec;
let deps: RolloutDependencies;

const now = () => clock;
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const alice = (scopes = ['deployments:write', 'devices:write']): Principal => ({
  subject: 'sub-alice',
  username: 'alice',
  companies: [company],
  scopes: new Set(scopes),
});

const subDevice = (uid: string, type: SubDevice['capability']['type'], advertised: string[]): SubDevice => ({
  uid,
  label: uid,
  version: '1.0',
  health: { state: 'NOMINAL', message: 'ok', messages: [] },
  capability: { type, modes: [] },
  commands: advertised.map((command) => ({ command, title: command, description: '', payload: {}, arguments: [] })),
});

/** A kiosk of the test's company with one hub of the given sub-devices (none: it never sent a health report). */
function kiosk(id: string, subDevices?: SubDevice[]): Device {
  const at = clock.toISOString();
  return {
    id,
    company,
    serial: `S-${id}`,
    created: at,
    updated: at,
    connection: { state: 'CONNECTED', connectedSince: at },
    ...(subDevices === undefined
      ? {}
      : {
          health: {
            updated: at,
            versionCode: '1',
            versionName: '1',
            mode: 'EMBEDDED_PLATFORM_ANDROID',
            hubs: [{ uid: 'hub-1', label: 'Hub', version: '1', registeredSince: at, type: 'x', devices: subDevices }],
          },
        }),
  };
}

/** The fleet most tests use: two printers and a terminal on k1, one printer on k2, nothing advertising on k3. */
async function fleet(): Promise<void> {
  await devices.put([
    kiosk('k1', [subDevice('printer-1', 'PRINTER', ['reboot', 'print-test-page']), subDevice('terminal-1', 'PAYMENT', ['reboot'])]),
    kiosk('k2', [subDevice('printer-1', 'PRINTER', ['reboot'])]),
    kiosk('k3', [subDevice('terminal-1', 'PAYMENT', ['beep'])]),
    kiosk('k4'),
  ]);
}

const workerDeps = () => ({
  rollouts,
  devices,
  scenarios: everyVersionExists,
  deployments: new DynamoDbDeploymentRepository(client, LOCAL_TABLES, cursors),
  commands,
  targetHealth: devices,
  now,
});

/** Delivers every message sent so far (and those sent meanwhile), in order: chunks to the worker, cancels to theirs. */
async function drain(): Promise<string[]> {
  const outcomes: string[] = [];
  while (queue.sent.length > 0) {
    const message = queue.sent.shift() as RolloutQueueMessage;
    if (message.type === 'RolloutCancelCommands') outcomes.push(`cancelled ${await cancelRolloutCommands(workerDeps(), message)}`);
    else outcomes.push((await runRolloutChunk(workerDeps(), message as RolloutWorkMessage)).outcome);
  }
  return outcomes;
}

const create = (input: Partial<RolloutCreateInput>, targets: readonly string[], principal = alice()) =>
  createRollout(
    deps,
    principal,
    company,
    { action: 'COMMAND', command: { command: 'reboot' }, targets: { ids: [...targets] }, ...input },
    targets,
  );

/** Every command of a device, oldest first. */
async function commandsOf(deviceId: string): Promise<Command[]> {
  return (await commands.list(company, deviceId, 100, undefined)).items.reverse();
}

/** A command's change of state, stored and then applied as the command changes consumer does (`times` deliveries). */
async function settle(command: Command, to: CommandState, times = 1): Promise<void> {
  const from: CommandState[] = to === 'DELIVERED' ? ['QUEUED'] : ['QUEUED', 'DELIVERED'];
  const changed = await commands.transition(company, command.deviceId, command.id, { from, to, at: clock.toISOString() });
  if (changed.outcome !== 'changed') throw new Error(`${command.id} did not change: ${changed.outcome}`);
  const change = commandChangeOf(command, changed.command);
  for (let delivery = 0; delivery < times; delivery += 1) {
    await applyCommandChanges(
      {
        events: { publish: async () => undefined },
        refreshDesiredState: async () => undefined,
        countRolloutResult: async (final) => void (await countRolloutCommand(rollouts, final)),
      },
      change === undefined ? [] : [change],
    );
  }
}

const sweep = () => sweepRollouts({ rollouts, queue, chunkTimeoutSeconds: 15, now });

const localTables = useLocalTables('command-rollouts-');

beforeEach(() => {
  client = localTables();
  companyCount += 1;
  company = `command-${companyCount}`;
  // A clock a day earlier than the previous test's: rollouts left in the shared sweep index are then not due.
  clock = new Date(START - companyCount * DAY);
  queue = new RecordingQueue<RolloutQueueMessage>();
  cursors = new CursorCodec(() => Buffer.alloc(32, 7));
  rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, cursors);
  commands = new DynamoDbCommandRepository(client, LOCAL_TABLES, cursors);
  devices = new DynamoDbDeviceRepository(client, LOCAL_TABLES);
  deps = { rollouts, queue, scenarios: everyVersionExists, now };
});

describe('creating a COMMAND rollout', () => {
  it('needs devices:write beside deployments:write, and writes nothing without it', async () => {
    await expect(create({}, ['k1'], alice(['deployments:write']))).rejects.toThrow(ForbiddenError);
    expect((await rollouts.list(company, 10, undefined)).items).toEqual([]);
    expect(queue.sent).toEqual([]);
  });

  it('answers the command with its defaults instead of a scenario version, and sends its first wave', async () => {
    const created = await create({ note: 'weekly reboot' }, ['k1', 'k2']);
    expect(created).toMatchObject({ action: 'COMMAND', command: { command: 'reboot', arguments: null, expiresInSeconds: 3600 } });
    expect(created).not.toHaveProperty('what');
    expect(queue.sent).toEqual([{ type: 'RolloutChunk', company, rolloutId: created.id, wave: 0, chunk: 0 }]);
    const read = await getRollout(deps, alice(), company, created.id);
    expect(read.command).toEqual(created.command);
  });

  it('refuses what does not fit the action, and an expiry out of bounds', async () => {
    await expect(create({ what: { type: 'SCENARIO', id: 'x', subId: '1.0.0' } }, ['k1'])).rejects.toThrow(BadRequestError);
    await expect(create({ command: { command: 'reboot', expiresInSeconds: 5 } }, ['k1'])).rejects.toThrow(BadRequestError);
    await expect(create({ action: 'DEPLOY' }, ['k1'])).rejects.toThrow(BadRequestError);
  });
});

describe('a COMMAND rollout chunk', () => {
  it("queues the command on each target's advertising sub-devices, in the creator's name; the others fail with their cause", async () => {
    await fleet();
    const created = await create({ command: { command: 'reboot', arguments: { delay: 5 }, expiresInSeconds: 600 }, note: 'n' }, [
      'k1',
      'k2',
      'k3',
      'k4',
      'k9',
    ]);
    expect(await drain()).toEqual(['done']);
    const k1 = await commandsOf('k1');
    expect(k1.map((command) => `${command.hub}/${command.device}`).sort()).toEqual(['hub-1/printer-1', 'hub-1/terminal-1']);
    expect(k1[0]).toMatchObject({
      command: 'reboot',
      arguments: { delay: 5 },
      state: 'QUEUED',
      by: 'alice',
      note: 'n',
      rollout: { id: created.id, wave: 0 },
      created: clock.toISOString(),
      expiresAt: new Date(clock.getTime() + 600_000).toISOString(),
    });
    expect(await commandsOf('k2')).toHaveLength(1);
    expect(await commandsOf('k3')).toEqual([]);
    const read = await getRollout(deps, alice(), company, created.id);
    expect(read.waves[0]?.counts).toEqual({ SUCCESS: 2, COMMANDS: 3, COMMAND_NOT_ADVERTISED: 2, TARGET_NOT_FOUND: 1 });
  });

  it('run again after a crash before it was marked done, writes no command twice and puts none back to QUEUED', async () => {
    await fleet();
    const created = await create({}, ['k1', 'k2']);
    const message = queue.sent.shift() as RolloutWorkMessage;
    // The first run writes every command, then dies before marking the chunk done.
    const crashing = Object.assign(Object.create(rollouts) as RolloutRepository, {
      markDone: async () => {
        throw new Error('simulated crash');
      },
    });
    await expect(runRolloutChunk({ ...workerDeps(), rollouts: crashing }, message)).rejects.toThrow('simulated crash');
    const [printer, terminal] = await commandsOf('k1');
    await settle(printer as Command, 'DELIVERED');
    await settle(terminal as Command, 'SUCCEEDED');
    advance(1_000);
    expect((await runRolloutChunk(workerDeps(), message)).outcome).toBe('done');
    expect((await commandsOf('k1')).map((command) => [command.id, command.state])).toEqual([
      [printer?.id, 'DELIVERED'],
      [terminal?.id, 'SUCCEEDED'],
    ]);
    expect(await commandsOf('k2')).toHaveLength(1);
    // Redelivered once more, the chunk is done: nothing is counted again.
    expect((await runRolloutChunk(workerDeps(), message)).outcome).toBe('skipped');
    const read = await getRollout(deps, alice(), company, created.id);
    expect(read.waves[0]?.counts).toEqual({ SUCCESS: 2, COMMANDS: 3, SUCCEEDED: 1 });
  });

  it('counts each final command once for its wave, whatever redelivers it', async () => {
    await fleet();
    const created = await create({}, ['k2']);
    await drain();
    const [command] = await commandsOf('k2');
    await settle(command as Command, 'FAILED', 3);
    const read = await getRollout(deps, alice(), company, created.id);
    expect(read.waves[0]?.counts).toEqual({ SUCCESS: 1, COMMANDS: 1, FAILED: 1 });
  });
});

describe('a COMMAND rollout in waves', () => {
  it('completes a wave once its commands are final, and pauses when FAILED and EXPIRED are above the threshold', async () => {
    await fleet();
    const created = await create({ waves: [2], failureThreshold: 0.5 }, ['k1', 'k2', 'k3']);
    await drain();
    const wave1 = [...(await commandsOf('k1')), ...(await commandsOf('k2'))];
    expect(wave1).toHaveLength(3);
    await settle(wave1[0] as Command, 'FAILED');
    await settle(wave1[1] as Command, 'SUCCEEDED');
    advance(1_000);
    expect((await sweep()).waiting).toEqual([`${company}/${created.id}`]);
    await settle(wave1[2] as Command, 'EXPIRED');
    advance(1_000);
    expect((await sweep()).paused).toEqual([`${company}/${created.id}`]);
    const paused = await getRollout(deps, alice(), company, created.id);
    expect(paused.state).toBe('PAUSED');
    expect(paused.pausedReason).toBe(
      'Wave 1: 2 of 3 commands FAILED or EXPIRED (66.7 %), above the failure threshold of 50 %. Resume to go on with wave 2, or cancel.',
    );
    expect(queue.sent).toEqual([]);
    await resumeRollout(deps, alice(), company, created.id);
    expect(await drain()).toEqual(['done']);
    const resumed = await getRollout(deps, alice(), company, created.id);
    // k3 advertises `reboot` nowhere: its wave queues nothing, and completes at the next sweep.
    expect(resumed.waves[1]?.counts).toEqual({ COMMAND_NOT_ADVERTISED: 1 });
    advance(1_000);
    expect((await sweep()).completed).toEqual([`${company}/${created.id}`]);
  });

  it('completes a wave at its timeout with commands still pending', async () => {
    await fleet();
    const created = await create({ waves: [1], waveTimeoutSeconds: 60, failureThreshold: 0 }, ['k2', 'k1']);
    await drain();
    advance(61_000);
    expect((await sweep()).started).toEqual([`${company}/${created.id}`]);
  });
});

describe('cancelling a COMMAND rollout', () => {
  it('cancels the commands still QUEUED, leaving those delivered or final as they are', async () => {
    await fleet();
    const created = await create({}, ['k1', 'k2']);
    await drain();
    const [printer, terminal] = await commandsOf('k1');
    await settle(printer as Command, 'DELIVERED');
    await settle(terminal as Command, 'SUCCEEDED');
    const cancelled = await cancelRollout(deps, alice(), company, created.id);
    expect(cancelled.state).toBe('CANCELLED');
    expect(queue.sent).toEqual([{ type: 'RolloutCancelCommands', company, rolloutId: created.id, chunk: 0 }]);
    expect(await drain()).toEqual(['cancelled 1']);
    expect((await commandsOf('k1')).map((command) => command.state)).toEqual(['DELIVERED', 'SUCCEEDED']);
    expect((await commandsOf('k2')).map((command) => command.state)).toEqual(['CANCELLED']);
    // Its work sent, the rollout left the sweep index.
    advance(1_000);
    expect(await rollouts.due(clock.toISOString(), 100)).not.toContainEqual({ company, rolloutId: created.id });
  });

  it('has the sweeper send the cancel when the queue refused it, once', async () => {
    await fleet();
    const created = await create({}, ['k2']);
    await drain();
    queue.failNext = true;
    const errors: unknown[] = [];
    await cancelRollout({ ...deps, onError: (error) => errors.push(error) }, alice(), company, created.id);
    expect(errors).toHaveLength(1);
    expect((await commandsOf('k2')).map((command) => command.state)).toEqual(['QUEUED']);
    advance(1_000);
    expect((await sweep()).cancelled).toEqual([`${company}/${created.id}`]);
    expect(await drain()).toEqual(['cancelled 1']);
    expect((await commandsOf('k2')).map((command) => command.state)).toEqual(['CANCELLED']);
    advance(1_000);
    expect((await sweep()).cancelled).toEqual([]);
  });

  it('cancels the commands of a chunk that was running when the rollout was cancelled', async () => {
    await fleet();
    const created = await create({}, ['k2']);
    const message = queue.sent.shift() as RolloutWorkMessage;
    // The cancel lands while the chunk runs: after the worker read the rollout RUNNING, before it marks the chunk done.
    const racing = Object.assign(Object.create(rollouts) as RolloutRepository, {
      markDone: async (...args: Parameters<RolloutRepository['markDone']>) => {
        await cancelRollout(deps, alice(), company, created.id);
        expect(await drain()).toEqual(['cancelled 0']);
        return rollouts.markDone(...args);
      },
    });
    expect((await runRolloutChunk({ ...workerDeps(), rollouts: racing }, message)).outcome).toBe('done');
    expect((await commandsOf('k2')).map((command) => command.state)).toEqual(['CANCELLED']);
  });
});

describe('a continuous COMMAND rollout', () => {
  it('gives a device that joins it the command, counted in the last wave and listed with its commands', async () => {
    await fleet();
    const query = 'health.mode=EMBEDDED_PLATFORM_ANDROID';
    const created = await createRollout(
      deps,
      alice(),
      company,
      { action: 'COMMAND', command: { command: 'reboot' }, targets: { query }, continuous: true },
      ['k1'],
      new Map([['health.mode', ['EMBEDDED_PLATFORM_ANDROID']]]),
    );
    await drain();
    const joiner = kiosk('k5', [subDevice('printer-1', 'PRINTER', ['reboot'])]);
    await devices.put([joiner]);
    const joined = await joinContinuousRollouts(workerDeps(), [{ device: deviceDocumentOf(joiner) }]);
    expect(joined.joined).toEqual([`${created.id}/k5`]);
    // Handled again (a redelivered record), it joins and queues nothing more.
    expect((await joinContinuousRollouts(workerDeps(), [{ device: deviceDocumentOf(joiner) }])).member).toEqual([`${created.id}/k5`]);
    const [command] = await commandsOf('k5');
    expect(command).toMatchObject({ state: 'QUEUED', by: 'alice', rollout: { id: created.id, wave: 0 } });
    expect(await commandsOf('k5')).toHaveLength(1);
    await settle(command as Command, 'SUCCEEDED');
    const read = await getRollout(deps, alice(), company, created.id);
    expect(read).toMatchObject({ joined: 1, waves: [{ size: 2, counts: { SUCCESS: 2, COMMANDS: 3, SUCCEEDED: 1 } }] });
    const targets = await listRolloutTargets(
      { rollouts, statuses: { deviceStatuses: async () => new Map() }, commands, cursors },
      alice(),
      company,
      created.id,
      { limit: 10 },
    );
    expect(targets.items.map((item) => [item.deviceId, item.commands?.map((one) => one.state)])).toEqual([
      ['k1', ['QUEUED', 'QUEUED']],
      ['k5', ['SUCCEEDED']],
    ]);
  });
});

describe("a COMMAND rollout's targets and preview", () => {
  it("lists each target's commands with their states, filtered by cause or command state", async () => {
    await fleet();
    const created = await create({}, ['k1', 'k2', 'k3']);
    await drain();
    const [k2] = await commandsOf('k2');
    await settle(k2 as Command, 'FAILED');
    const list = (query: Parameters<typeof listRolloutTargets>[4]) =>
      listRolloutTargets(
        { rollouts, statuses: { deviceStatuses: async () => new Map() }, commands, cursors },
        alice(),
        company,
        created.id,
        query,
      );
    const all = await list({ limit: 10 });
    expect(
      all.items.map((item) => [item.deviceId, item.result.state, item.result.cause, item.commands?.map((c) => `${c.subId} ${c.state}`)]),
    ).toEqual([
      ['k1', 'SUCCESS', null, ['hub-1/printer-1 QUEUED', 'hub-1/terminal-1 QUEUED']],
      ['k2', 'SUCCESS', null, ['hub-1/printer-1 FAILED']],
      ['k3', 'FAILURE', 'COMMAND_NOT_ADVERTISED', []],
    ]);
    expect((await list({ limit: 10, commandState: 'FAILED' })).items.map((item) => item.deviceId)).toEqual(['k2']);
    expect((await list({ limit: 10, cause: 'COMMAND_NOT_ADVERTISED' })).items.map((item) => item.deviceId)).toEqual(['k3']);
    await expect(list({ limit: 10, deviceStatus: 'FAILED' })).rejects.toThrow(BadRequestError);
  });

  it('previews who advertises the command, by sub-device type, without writing anything', async () => {
    await fleet();
    const preview = await previewRollout(
      { scenarios: everyVersionExists, targetHealth: devices, now },
      alice(),
      company,
      {
        action: 'COMMAND',
        command: { command: 'reboot' },
        targets: { ids: ['k1', 'k2', 'k3', 'k4', 'k9'] },
        waves: [2],
      },
      ['k1', 'k2', 'k3', 'k4', 'k9'],
    );
    expect(preview).toEqual({
      dryRun: true,
      action: 'COMMAND',
      targets: 5,
      waves: [2, 3],
      command: { advertising: 2, notAdvertising: 2, notFound: 1, commands: 3, bySubDeviceType: { PRINTER: 2, PAYMENT: 1 } },
    });
    expect((await rollouts.list(company, 10, undefined)).items).toEqual([]);
    expect(await commandsOf('k1')).toEqual([]);
    await expect(
      previewRollout(
        { scenarios: everyVersionExists, targetHealth: devices },
        alice(['deployments:write']),
        company,
        {
          action: 'COMMAND',
          command: { command: 'reboot' },
          targets: { ids: ['k1'] },
        },
        ['k1'],
      ),
    ).rejects.toThrow(ForbiddenError);
  });
});
