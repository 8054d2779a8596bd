/**
 * Commands over the local runtime: an operator runs a command a kiosk's sub-device advertises, the kiosk receives it
 * through the pull it makes anyway (the ETag changes, nothing else is asked of it), reports SUCCEEDED, and the command
 * shows it; a command not advertised is 409 and writes nothing; one never fetched becomes EXPIRED; a viewer is 403,
 * another company's device 404; every change is an event.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const KIOSK = 'acme-kiosk-0001';
const local = useLocalService({
  users: ['alice', 'olivia', 'bob'],
  ownDynamoDbPort: true,
  environment: { COMMAND_SWEEP_INTERVAL_MS: '500' },
});
let kiosk: string;
let sub: { hub: string; device: string; command: string };

const as = (token: string) => clientFor(local.service, token);
const path = (deviceId = KIOSK, companyId = 'acme') => ({ path: { companyId, deviceId } });
const run = (token: string, body: Record<string, unknown>, deviceId = KIOSK, companyId = 'acme') =>
  as(token).main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands', {
    params: path(deviceId, companyId),
    body: body as never,
  });
const commandOf = async (id: string) =>
  expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}', {
      params: { path: { companyId: 'acme', deviceId: KIOSK, commandId: id } },
    }),
  );
const pull = (ifNoneMatch?: string) =>
  as(kiosk).main.GET('/device/deployments', { params: { header: ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch } } });
const listed = async () =>
  expectOk(await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', { params: path() }));

beforeAll(async () => {
  const issuer = { dataDirectory: local.settings.dataDirectory, dynamoDbEndpoint: local.dynamoDbEndpoint, auth: local.service.auth };
  ({ token: kiosk } = await deviceToken(issuer, 'acme', KIOSK));
  const device = expectOk(await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: path() }));
  const hub = device.health?.hubs.find((candidate) => candidate.devices.some((d) => d.commands.some((c) => c.command === 'reboot')));
  const advertising = hub?.devices.find((d) => d.commands.some((c) => c.command === 'reboot'));
  if (hub === undefined || advertising === undefined) throw new Error(`The demo kiosk ${KIOSK} advertises no reboot.`);
  sub = { hub: hub.uid, device: advertising.uid, command: 'reboot' };
  // The runtime's stream consumers are still catching up on the demo data after start (its deployments among them):
  // wait until the kiosk's desired state holds still, so that what changes its tag below is the test's doing.
  await eventually(
    async () => {
      const first = (await pull()).response.headers.get('etag');
      await new Promise((done) => setTimeout(done, 1_500));
      return first === (await pull()).response.headers.get('etag');
    },
    "the kiosk's desired state to hold still",
    60_000,
  );
}, 180_000);

describe('a command on one kiosk', () => {
  it('reaches the kiosk through its pull, which the kiosk reports SUCCEEDED, and the command shows it', async () => {
    const before = await pull();
    const etag = before.response.headers.get('etag') as string;
    const created = await run(local.tokens.alice, { ...sub, arguments: { delaySeconds: 5 }, note: 'stuck screen' });
    expect(created.response.status).toBe(202);
    const command = expectOk(created);
    expect(created.response.headers.get('location')).toBe(`/companies/acme/resources/devices/${KIOSK}/commands/${command.id}`);
    expect(command).toMatchObject({
      state: 'QUEUED',
      by: 'alice',
      arguments: { delaySeconds: 5 },
      target: { subId: `${sub.hub}/${sub.device}` },
    });

    // The stored tag follows the commands stream: the kiosk's conditional pull changes within moments.
    let pulled: Awaited<ReturnType<typeof pull>> | undefined;
    await eventually(async () => {
      pulled = await pull(etag);
      return pulled.response.status === 200;
    }, 'the pull to carry the command');
    const state = expectOk(pulled as NonNullable<typeof pulled>);
    expect(state.commands).toEqual([
      {
        id: command.id,
        hub: sub.hub,
        device: sub.device,
        command: 'reboot',
        arguments: { delaySeconds: 5 },
        created: command.created,
        expiresAt: command.expiresAt,
      },
    ]);
    expect((await commandOf(command.id)).state).toBe('DELIVERED');
    // Delivered is not a change of what the kiosk must do: its tag holds.
    const tag = pulled?.response.headers.get('etag') as string;
    expect((await pull(tag)).response.status).toBe(304);

    const reported = await as(kiosk).main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: command.id } },
      body: { state: 'SUCCEEDED', message: 'Rebooted.', output: { uptimeSeconds: 0 } },
    });
    expect(reported.response.status).toBe(204);
    expect(await commandOf(command.id)).toMatchObject({
      state: 'SUCCEEDED',
      result: { message: 'Rebooted.', output: { uptimeSeconds: 0 } },
    });
    const again = await as(kiosk).main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: command.id } },
      body: { state: 'FAILED' },
    });
    expect(again.response.status).toBe(409);
    // Once final it leaves the pull.
    await eventually(async () => (await pull(tag)).response.status === 200, 'the pull to drop the final command');
    expect(expectOk(await pull()).commands).toEqual([]);

    const events = join(local.settings.dataDirectory, 'events', 'events.jsonl');
    // The file appears with the first event the stream consumers publish, moments after the changes.
    const ofCommand = async () =>
      (await readFile(events, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { type: string; commandId?: string; state?: string; by?: string })
        .filter((event) => event.type === 'CommandStateChanged' && event.commandId === command.id);
    await eventually(async () => (await ofCommand()).some((event) => event.state === 'SUCCEEDED'), 'the final event', 30_000);
    const states = await ofCommand();
    expect(states.map((event) => event.state)).toEqual(['QUEUED', 'DELIVERED', 'SUCCEEDED']);
    expect(states.every((event) => event.by === 'alice')).toBe(true);
  });

  it('refuses a command the sub-device does not advertise with 409 COMMAND_NOT_ADVERTISED, writing nothing', async () => {
    const before = (await listed()).items.length;
    const refused = await run(local.tokens.alice, { ...sub, command: 'format-disk' });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ status: 409, cause: 'COMMAND_NOT_ADVERTISED' });
    expect((await listed()).items).toHaveLength(before);
  });

  it('makes a command that is never fetched EXPIRED, and a late result is refused', async () => {
    const { id } = expectOk(await run(local.tokens.alice, { ...sub, expiresInSeconds: 10 }));
    await eventually(async () => (await commandOf(id)).state === 'EXPIRED', 'the command to expire', 20_000, 250);
    const late = await as(kiosk).main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: id } },
      body: { state: 'SUCCEEDED' },
    });
    expect(late.response.status).toBe(409);
  });

  it('cancels a pending command once', async () => {
    const { id } = expectOk(await run(local.tokens.alice, sub));
    const cancel = () =>
      as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}/cancel', {
        params: { path: { companyId: 'acme', deviceId: KIOSK, commandId: id } },
      });
    expect(expectOk(await cancel()).state).toBe('CANCELLED');
    expect((await cancel()).response.status).toBe(409);
  });

  it('lets a viewer read but not run, and shows another company nothing', async () => {
    expect((await run(local.tokens.olivia, sub)).response.status).toBe(403);
    expect(
      (await as(local.tokens.olivia).main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', { params: path() })).response
        .status,
    ).toBe(200);
    // bob belongs to globex: acme's path is refused before anything is read, and acme's kiosk id under globex is unknown.
    expect((await run(local.tokens.bob, sub)).response.status).toBe(403);
    expect((await run(local.tokens.bob, sub, KIOSK, 'globex')).response.status).toBe(404);
  });

  it('lets a kiosk report only on its own commands: another kiosk’s is 404 and stays as it was', async () => {
    const other = 'acme-kiosk-0002';
    const device = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: path(other) }),
    );
    const hub = device.health?.hubs.find((candidate) => candidate.devices.some((d) => d.commands.length > 0));
    const target = hub?.devices.find((d) => d.commands.length > 0);
    if (hub === undefined || target === undefined) throw new Error(`The demo kiosk ${other} advertises no command.`);
    const { id } = expectOk(
      await run(local.tokens.alice, { hub: hub.uid, device: target.uid, command: target.commands[0]?.command }, other),
    );
    const report = await as(kiosk).main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: id } },
      body: { state: 'FAILED' },
    });
    expect(report.response.status).toBe(404);
    const stored = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}', {
        params: { path: { companyId: 'acme', deviceId: other, commandId: id } },
      }),
    );
    expect(stored.state).toBe('QUEUED');
  });
});
