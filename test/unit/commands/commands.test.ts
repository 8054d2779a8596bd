import { describe, expect, it } from 'vitest';
import { commandCreate, deviceCommandStatusPost } from '../../../functions/contract/routes/commands.js';
import { applyCommandChanges, commandChangeOf } from '../../../functions/core/commands/changes.js';
import {
  advertisers,
  COMMAND_NOT_ADVERTISED,
  CommandNotAdvertisedError,
  cancelCommand,
  createCommand,
  getCommand,
  listCommands,
} from '../../../functions/core/commands/commands.js';
import { reportCommandResult } from '../../../functions/core/commands/device-side.js';
import { sweepExpiredCommands } from '../../../functions/core/commands/expiry.js';
import { type Command, MAX_COMMAND_JSON_BYTES } from '../../../functions/core/commands/model.js';
import type { DeploymentEvent } from '../../../functions/core/deployments/model.js';
import { deviceDesiredState } from '../../../functions/core/devices/desired-state.js';
import type { StoredDevice, SubDevice } from '../../../functions/core/devices/model.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { InMemoryCommands } from '../../support/in-memory-commands.js';
import { bodyOf } from '../../support/route-input.js';

const T0 = new Date('2026-12-06T08:00:00.000Z');

const printer = (uid: string, commands: string[]): SubDevice => ({
  uid,
  label: `Printer ${uid}`,
  version: '1.0',
  health: { state: 'NOMINAL', message: 'ok', messages: [] },
  capability: { type: 'PRINTER', modes: ['PRINTER_PRINT'] },
  commands: commands.map((command) => ({ command, title: command, description: '', payload: {}, arguments: [] })),
});

const device: StoredDevice = {
  id: 'kiosk-1',
  company: 'acme',
  serial: 'S1',
  created: T0.toISOString(),
  updated: T0.toISOString(),
  connection: { state: 'CONNECTED', connectedSince: T0.toISOString() },
  credential: { id: '01JCRED0000000000000000000', secretHash: 'x', created: T0.toISOString() },
  health: {
    updated: T0.toISOString(),
    versionCode: '1',
    versionName: '1',
    mode: 'EMBEDDED_PLATFORM_ANDROID',
    hubs: [
      {
        uid: 'hub-1',
        label: 'Hub',
        version: '1',
        registeredSince: T0.toISOString(),
        type: 'x',
        devices: [printer('printer-1', ['print-test-page', 'reboot']), printer('printer-2', ['reboot'])],
      },
    ],
  },
};

const alice: Principal = { subject: 'alice', username: 'alice', companies: ['acme'], scopes: new Set(['devices:write', 'devices:read']) };
const kiosk: Principal = {
  subject: 'kiosk-1',
  companies: ['acme'],
  scopes: new Set(['device']),
  device: { company: 'acme', deviceId: 'kiosk-1', credentialId: '01JCRED0000000000000000000' },
};

function world(now = T0) {
  const commands = new InMemoryCommands();
  const devices = {
    get: async (company: string, deviceId: string) => (company === 'acme' && deviceId === device.id ? structuredClone(device) : undefined),
  };
  const clock = { now };
  return { commands, devices, clock, deps: { devices, commands, now: () => clock.now } };
}

const run = { hub: 'hub-1', device: 'printer-1', command: 'print-test-page' };
const createBody = (body: unknown) => bodyOf(commandCreate, body, { companyId: 'acme', deviceId: 'kiosk-1' });
const statusBody = (body: unknown) => bodyOf(deviceCommandStatusPost, body, { commandId: '01JCMD00000000000000000000' });

describe('running a command on one sub-device', () => {
  it('queues an advertised command for an hour by default, its arguments kept as sent and its author recorded', async () => {
    const { deps, commands } = world();
    const view = await createCommand(deps, alice, 'acme', 'kiosk-1', { ...run, arguments: { copies: 2, big: 1e300 } });
    expect(view).toMatchObject({
      target: { type: 'DEVICE', id: 'kiosk-1', subId: 'hub-1/printer-1' },
      command: 'print-test-page',
      arguments: { copies: 2, big: 1e300 },
      state: 'QUEUED',
      by: 'alice',
      expiresAt: '2026-12-06T09:00:00.000Z',
    });
    expect(commands.items.size).toBe(1);
  });

  it('refuses a command the sub-device does not advertise with COMMAND_NOT_ADVERTISED, writing nothing', async () => {
    const { deps, commands } = world();
    const attempts = [
      { ...run, command: 'open-locker' },
      { ...run, device: 'printer-2' },
      { ...run, hub: 'hub-9' },
    ];
    for (const attempt of attempts) {
      const error = await createCommand(deps, alice, 'acme', 'kiosk-1', attempt).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CommandNotAdvertisedError);
      expect(problemOf(error as CommandNotAdvertisedError)).toMatchObject({ status: 409, cause: COMMAND_NOT_ADVERTISED });
    }
    expect(commands.items.size).toBe(0);
  });

  it('answers 404 for an unknown device and 403 for another company, writing nothing', async () => {
    const { deps, commands } = world();
    await expect(createCommand(deps, alice, 'acme', 'kiosk-404', run)).rejects.toBeInstanceOf(NotFoundError);
    await expect(createCommand(deps, alice, 'globex', 'kiosk-1', run)).rejects.toBeInstanceOf(ForbiddenError);
    expect(commands.items.size).toBe(0);
  });

  it('bounds the body: arguments of more than 8 KiB, an expiry outside 10 s to 7 days, control characters in names', () => {
    const big = { blob: 'x'.repeat(MAX_COMMAND_JSON_BYTES) };
    expect(() => createBody({ ...run, arguments: big })).toThrow(BadRequestError);
    expect(() => createBody({ ...run, expiresInSeconds: 9 })).toThrow(BadRequestError);
    expect(() => createBody({ ...run, expiresInSeconds: 604_801 })).toThrow(BadRequestError);
    expect(() => createBody({ ...run, command: 'reboot\u001b[2J' })).toThrow(BadRequestError);
    expect(() => createBody({ ...run, extra: 1 })).toThrow(BadRequestError);
    expect(createBody({ ...run, arguments: [null, { a: 'é' }], expiresInSeconds: 604_800 })).toMatchObject({
      arguments: [null, { a: 'é' }],
    });
  });

  it('lists a device’s commands newest first, pages them, and reads and cancels one', async () => {
    const { deps, clock } = world();
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      clock.now = new Date(T0.getTime() + index * 1000);
      ids.push((await createCommand(deps, alice, 'acme', 'kiosk-1', run)).id);
    }
    const first = await listCommands(deps, alice, 'acme', 'kiosk-1', { limit: 2 });
    expect(first.items.map((item) => item.id)).toEqual([ids[2], ids[1]]);
    const second = await listCommands(deps, alice, 'acme', 'kiosk-1', { limit: 2, cursor: first.nextCursor ?? '' });
    expect(second.items.map((item) => item.id)).toEqual([ids[0]]);
    await expect(listCommands(deps, alice, 'acme', 'kiosk-404', { limit: 2 })).rejects.toBeInstanceOf(NotFoundError);
    expect((await cancelCommand(deps, alice, 'acme', 'kiosk-1', ids[0] as string)).state).toBe('CANCELLED');
    expect((await getCommand(deps, alice, 'acme', 'kiosk-1', ids[0] as string)).state).toBe('CANCELLED');
    await expect(cancelCommand(deps, alice, 'acme', 'kiosk-1', ids[0] as string)).rejects.toThrow(/already CANCELLED/);
    await expect(getCommand(deps, alice, 'acme', 'kiosk-1', '01JXXXXXXXXXXXXXXXXXXXXXXX')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('names every sub-device that advertises a command, in report order', () => {
    expect(advertisers(device, 'reboot')).toEqual([
      { hub: 'hub-1', device: 'printer-1' },
      { hub: 'hub-1', device: 'printer-2' },
    ]);
    expect(advertisers({ health: undefined }, 'reboot')).toEqual([]);
  });
});

describe('the device side of commands', () => {
  const deviceSide = (w: ReturnType<typeof world>) => ({
    devices: { get: w.devices.get, setDesiredState: async () => 'written' as const },
    deployments: { activeOnDevice: async () => [] },
    catalog: { getVersions: async () => [] },
    archives: { presignGet: async () => 'http://127.0.0.1:9/x' },
    commands: w.commands,
    now: () => w.clock.now,
    checkStoredTag: () => false,
  });

  it('pulls its pending commands, which become DELIVERED, and a new command changes the tag but a delivery does not', async () => {
    const w = world();
    const empty = await deviceDesiredState(deviceSide(w), kiosk);
    const { id } = await createCommand(w.deps, alice, 'acme', 'kiosk-1', { ...run, arguments: { copies: 1 } });
    const pulled = await deviceDesiredState(deviceSide(w), kiosk);
    expect(pulled.tag).not.toBe(empty.tag);
    expect(pulled.unchanged === false && pulled.commands).toEqual([
      {
        id,
        hub: 'hub-1',
        device: 'printer-1',
        command: 'print-test-page',
        arguments: { copies: 1 },
        created: T0.toISOString(),
        expiresAt: '2026-12-06T09:00:00.000Z',
      },
    ]);
    expect((await w.commands.get('acme', 'kiosk-1', id))?.state).toBe('DELIVERED');
    const again = await deviceDesiredState(deviceSide(w), kiosk, (tag) => tag === pulled.tag);
    expect(again).toEqual({ tag: pulled.tag, unchanged: true });
  });

  it('does not hand out a command past its expiry, even before the sweeper marked it', async () => {
    const w = world();
    await createCommand(w.deps, alice, 'acme', 'kiosk-1', { ...run, expiresInSeconds: 10 });
    w.clock.now = new Date(T0.getTime() + 10_000);
    const pulled = await deviceDesiredState(deviceSide(w), kiosk);
    expect(pulled.unchanged === false && pulled.commands).toEqual([]);
  });

  it('records a result once: 204 the first time, 409 after, 404 for another device’s command, 409 past its expiry', async () => {
    const w = world();
    const { id } = await createCommand(w.deps, alice, 'acme', 'kiosk-1', run);
    await reportCommandResult(w.deps, kiosk, id, { state: 'SUCCEEDED', message: 'printed', output: { pages: 1 } });
    expect(await w.commands.get('acme', 'kiosk-1', id)).toMatchObject({
      state: 'SUCCEEDED',
      result: { message: 'printed', output: { pages: 1 } },
    });
    await expect(reportCommandResult(w.deps, kiosk, id, { state: 'FAILED' })).rejects.toThrow(/already SUCCEEDED/);
    await expect(reportCommandResult(w.deps, kiosk, '01JXXXXXXXXXXXXXXXXXXXXXXX', { state: 'FAILED' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(reportCommandResult(w.deps, kiosk, 'not-a-ulid', { state: 'FAILED' })).rejects.toBeInstanceOf(NotFoundError);
    const late = await createCommand(w.deps, alice, 'acme', 'kiosk-1', { ...run, expiresInSeconds: 10 });
    w.clock.now = new Date(T0.getTime() + 11_000);
    await expect(reportCommandResult(w.deps, kiosk, late.id, { state: 'SUCCEEDED' })).rejects.toThrow(ConflictError);
    await expect(reportCommandResult(w.deps, kiosk, late.id, { state: 'SUCCEEDED' })).rejects.toThrow(/expired/);
  });

  it('bounds a report: state SUCCEEDED or FAILED, a message of at most 1,000 characters, output of at most 8 KiB', () => {
    expect(() => statusBody({ state: 'DELIVERED' })).toThrow(BadRequestError);
    expect(() => statusBody({ state: 'FAILED', message: 'x'.repeat(1_001) })).toThrow(BadRequestError);
    expect(() => statusBody({ state: 'FAILED', output: 'x'.repeat(MAX_COMMAND_JSON_BYTES) })).toThrow(BadRequestError);
    expect(statusBody({ state: 'FAILED', message: 'paper\njam' })).toEqual({ state: 'FAILED', message: 'paper\njam' });
  });
});

describe('expiry and what follows a change', () => {
  it('expires only pending commands past their expiry, once', async () => {
    const w = world();
    const short = await createCommand(w.deps, alice, 'acme', 'kiosk-1', { ...run, expiresInSeconds: 10 });
    const done = await createCommand(w.deps, alice, 'acme', 'kiosk-1', { ...run, expiresInSeconds: 10 });
    const long = await createCommand(w.deps, alice, 'acme', 'kiosk-1', run);
    await reportCommandResult(w.deps, kiosk, done.id, { state: 'FAILED' });
    w.clock.now = new Date(T0.getTime() + 10_000);
    expect(await sweepExpiredCommands({ commands: w.commands, now: () => w.clock.now })).toBe(1);
    expect(await sweepExpiredCommands({ commands: w.commands, now: () => w.clock.now })).toBe(0);
    const states = await Promise.all([short, done, long].map(async ({ id }) => (await w.commands.get('acme', 'kiosk-1', id))?.state));
    expect(states).toEqual(['EXPIRED', 'FAILED', 'QUEUED']);
  });

  it('publishes one event per change of state and refreshes the tag only when the pending set changed', async () => {
    const command: Command = {
      id: '01JCMD00000000000000000000',
      company: 'acme',
      deviceId: 'kiosk-1',
      hub: 'hub-1',
      device: 'printer-1',
      command: 'reboot',
      arguments: null,
      state: 'QUEUED',
      created: T0.toISOString(),
      updated: T0.toISOString(),
      expiresAt: T0.toISOString(),
      by: 'alice',
    };
    const delivered = { ...command, state: 'DELIVERED' as const };
    const failed = { ...command, state: 'FAILED' as const, result: { message: 'jam' } };
    const changes = [
      commandChangeOf(undefined, command),
      commandChangeOf(command, delivered),
      commandChangeOf(delivered, delivered),
      commandChangeOf(delivered, failed),
    ].flatMap((change) => change ?? []);
    const published: DeploymentEvent[] = [];
    const refreshed: string[] = [];
    await applyCommandChanges(
      {
        events: { publish: async (events) => void published.push(...events) },
        refreshDesiredState: async (_company, deviceId) => void refreshed.push(deviceId),
      },
      changes,
    );
    expect(published.map((event) => event.type === 'CommandStateChanged' && `${event.state} ${event.message}`)).toEqual([
      'QUEUED null',
      'DELIVERED null',
      'FAILED jam',
    ]);
    // Created and failed changed the pending set; both in one batch refresh the device once.
    expect(refreshed).toEqual(['kiosk-1']);
    const onlyDelivery = [commandChangeOf(command, delivered)].flatMap((change) => change ?? []);
    refreshed.length = 0;
    await applyCommandChanges(
      { events: { publish: async () => undefined }, refreshDesiredState: async (_c, d) => void refreshed.push(d) },
      onlyDelivery,
    );
    expect(refreshed).toEqual([]);
  });
});
