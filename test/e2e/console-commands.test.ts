/**
 * End-to-end over `npm start` in headless Chromium: commands in the console. On the device page, an operator runs a
 * command a sub-device advertises (JSON that does not parse refused in the form), and watches it go QUEUED →
 * DELIVERED → SUCCEEDED without a reload while the test, acting as the kiosk with a device token, pulls it and reports
 * its result; the polling stops once nothing is pending. A pending command is cancelled; a command the sub-device no
 * longer advertises shows the service's detail; a viewer sees the commands and history without Run or Cancel. On the
 * fleet page, a command is run on the devices a search finds, in waves, after the service's preview; the test, acting
 * as the kiosks, fails the first wave above the threshold, and the paused rollout's page shows who failed and why.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { argumentsText } from '../../console/src/device/command-draft.js';
import { COMMAND_POLL_MS } from '../../console/src/device/command-list.js';
import { deviceToken } from '../support/device-token.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console commands tests');

const local = useLocalService({ users: ['alice', 'olivia'], ownDynamoDbPort: true });

/** Alice's typed client. */
function alice() {
  return clientFor(local.service, local.tokens.alice);
}

/** A sub-device that advertises commands, as the device resource holds it, with its `<hub uid>/<uid>`. */
interface Advertiser {
  deviceId: string;
  hub: string;
  uid: string;
  label: string;
  subId: string;
  advertised: { command: string; title: string; description: string; arguments?: unknown }[];
}

/** Acme devices whose sub-devices advertise commands (the demo's peripherals do), through search. */
async function advertisingDevices(): Promise<string[]> {
  let ids: string[] = [];
  await eventually(async () => {
    const page = expectOk(
      await alice().main.GET('/resources/search', {
        params: { query: { company: ['acme'], type: ['DEVICE'], 'health.hubs.devices.commands.command': ['reboot'], pageSize: 10 } },
      }),
    );
    ids = page.resources.map((resource) => resource.id);
    return ids.length >= 3;
  }, 'acme devices advertising commands in search');
  return ids;
}

/** The first sub-device of `deviceId` (hub by hub, as the page lists them) that advertises a command. */
async function firstAdvertiser(deviceId: string): Promise<Advertiser> {
  const device = expectOk(
    await alice().main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId: 'acme', deviceId } } }),
  );
  for (const hub of device.health?.hubs ?? []) {
    for (const sub of hub.devices) {
      if (sub.commands.length > 0) {
        return { deviceId, hub: hub.uid, uid: sub.uid, label: sub.label, subId: `${hub.uid}/${sub.uid}`, advertised: sub.commands };
      }
    }
  }
  throw new Error(`${deviceId} advertises no command`);
}

/** The device's commands, newest first, as the API lists them. */
async function commandsOf(deviceId: string) {
  return expectOk(
    await alice().main.GET('/companies/{companyId}/resources/devices/{deviceId}/commands', {
      params: { path: { companyId: 'acme', deviceId }, query: { limit: 100 } },
    }),
  ).items;
}

/** What has the keyboard focus: its id, else its tag and words. */
function focused(page: Page): Promise<string> {
  return page.evaluate(
    "(() => { const e = document.activeElement; return e === null ? '' : e.id || (e.tagName.toLowerCase() + ' ' + (e.textContent ?? '')).trim(); })()",
  ) as Promise<string>;
}

/** The state cell's first words of the history row of `commandId` (`Queued`, `Succeeded`). */
function stateOf(page: Page, commandId: string): Promise<string> {
  return page
    .locator(`tr[data-command-id="${commandId}"] td.command-state span`)
    .first()
    .textContent()
    .then((text) => text ?? '');
}

/** A token of the kiosk `deviceId` (a fresh credential, as the client credentials grant gives). */
async function kioskToken(deviceId: string): Promise<string> {
  return (await deviceToken({ ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint }, 'acme', deviceId)).token;
}

/** A sub-device of a test kiosk's health: its uid, label, capability type and the commands it advertises. */
function subDevice(uid: string, label: string, type: 'PRINTER' | 'PAYMENT', commands: string[]) {
  return {
    uid,
    label,
    version: '1.0.0',
    health: { state: 'NOMINAL', message: 'OK', messages: [] },
    capability: { type, modes: [] },
    commands: commands.map((command) => ({ command, title: command, description: `Runs ${command}.`, payload: {}, arguments: [] })),
  };
}

/**
 * Registers five kiosks of acme reporting the version code `code` (their search), and returns their ids, sorted (the
 * order of a rollout's waves) with their tokens. The first advertises `command` on its printer and its card terminal,
 * the second advertises only `beep`, the others `command` on their printer.
 */
async function commandFleet(code: string, command: string): Promise<{ ids: string[]; tokens: Map<string, string> }> {
  const ids = [1, 2, 3, 4, 5].map((n) => `${code}-${n}`);
  expectOk(
    await alice().main.POST('/companies/{companyId}/resources/devices', {
      params: { path: { companyId: 'acme' } },
      body: ids.map((id) => ({ id, serial: `SN-${id}` })),
    }),
  );
  const tokens = new Map<string, string>();
  for (const [index, id] of ids.entries()) {
    const printer = subDevice(`${id}-printer`, 'Receipt printer', 'PRINTER', index === 1 ? ['beep'] : [command]);
    const devices = index === 0 ? [printer, subDevice(`${id}-payment`, 'Card terminal', 'PAYMENT', [command])] : [printer];
    const hub = { uid: `${id}-hub`, label: 'Main hub', version: '1.0.0', registeredSince: '2026-01-01T00:00:00Z', type: 'USB', devices };
    const token = await kioskToken(id);
    const health = { versionCode: code, versionName: '1.0', mode: 'SERVER', hubs: [hub] };
    expect((await clientFor(local.service, token).main.PUT('/device/health', { body: health as never })).response.status).toBe(204);
    tokens.set(id, token);
  }
  await eventually(async () => {
    const found = expectOk(
      await alice().main.GET('/resources/search', { params: { query: { 'health.versionCode': [code], type: ['DEVICE'] } } }),
    );
    return found.total === ids.length;
  }, 'the five kiosks in search');
  return { ids, tokens };
}

/** The kiosk's pending commands once its pull lists `count` of them. */
async function pulled(token: string, count: number) {
  const kiosk = clientFor(local.service, token);
  let commands: { id: string; device: string; command: string }[] = [];
  await eventually(
    async () => {
      commands = (await kiosk.main.GET('/device/deployments', { params: { header: {} } })).data?.commands ?? [];
      return commands.length === count;
    },
    `${count} commands in the kiosk pull`,
    30_000,
  );
  return commands;
}

/** Reports a command's result as the kiosk of `token`. */
async function report(token: string, commandId: string, state: 'SUCCEEDED' | 'FAILED', message: string): Promise<void> {
  const answer = await clientFor(local.service, token).main.POST('/device/commands/{commandId}/status', {
    params: { path: { commandId } },
    body: { state, message },
  });
  expect(answer.response.status).toBe(204);
}

describe.skipIf(!hasChromium)('commands in the console', () => {
  let browser: Browser;
  let devices: string[];
  beforeAll(async () => {
    browser = await launchChromium();
    devices = await advertisingDevices();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('runs a command from the device page and shows it queued, delivered and succeeded without a reload', {
    timeout: 180_000,
  }, async () => {
    const target = await firstAdvertiser(devices[0] as string);
    const advertised = target.advertised[0] as Advertiser['advertised'][number];
    const { page, errors, requested } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${target.deviceId}`);
    // The page's timers under the test's clock (time still flows), installed before the page's scripts run: a reload.
    await page.clock.install();
    await page.reload();
    await page.evaluate('window.sameDocument = true');
    await page.getByText('No command has been run on this device yet.').waitFor();

    // The form: its heading takes the focus; the arguments are what the device advertised.
    await page
      .getByRole('button', { name: `Run ${advertised.title} on ${target.label}`, exact: true })
      .first()
      .click();
    await expect.poll(() => focused(page)).toBe('run-command-title');
    const form = page.getByRole('region', { name: `Run ${advertised.title} on ${target.label}` });
    expect(await form.textContent()).toContain(advertised.description);
    const args = form.getByLabel('Arguments (JSON)');
    expect(await args.inputValue()).toBe(argumentsText(advertised.arguments));
    await expectAccessible(page, 'device page with the run form');
    await screenshot(page, 'console-command-form.png');

    // JSON that does not parse is refused next to its field, which gets the focus; nothing is queued.
    await args.fill('{ "copies": 2,');
    const submit = form.getByRole('button', { name: `Run ${advertised.title} on ${target.label}` });
    await submit.click();
    await expect.poll(() => args.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#run-command-arguments-error').textContent()).toMatch(/^The arguments are not valid JSON/);
    expect(await focused(page)).toBe('run-command-arguments');
    await expectAccessible(page, 'run form refusing its JSON');
    expect(await commandsOf(target.deviceId)).toEqual([]);

    // Run: the command shows QUEUED in the history, as the API holds it.
    await args.fill('{ "copies": 2 }');
    await form.getByLabel('Expires after').selectOption({ label: '10 minutes' });
    await form.getByLabel('Note (optional)').fill('From the console test');
    await submit.click();
    await page
      .getByRole('status')
      .filter({ hasText: `${advertised.title} on ${target.label}: Queued.` })
      .waitFor();
    const [command] = await commandsOf(target.deviceId);
    expect(command).toMatchObject({ command: advertised.command, arguments: { copies: 2 }, note: 'From the console test', by: 'alice' });
    expect(command?.target.subId).toBe(target.subId);
    expect(Date.parse(command?.expiresAt ?? '') - Date.parse(command?.created ?? '')).toBe(600_000);
    const id = command?.id as string;
    await expect.poll(() => stateOf(page, id)).toBe('Queued');
    expect(await focused(page)).toBe(`button Run ${advertised.title} on ${target.label}`);

    // The kiosk pulls it (DELIVERED), then reports SUCCEEDED: the page's polling shows both.
    const kiosk = clientFor(local.service, await kioskToken(target.deviceId));
    await eventually(async () => {
      const pulled = await kiosk.main.GET('/device/deployments', { params: { header: {} } });
      return (pulled.data?.commands ?? []).some((pending) => pending.id === id);
    }, 'the command in the kiosk pull');
    const reads = () => requested.filter((url) => new URL(url).pathname.endsWith(`/devices/${target.deviceId}/commands`)).length;
    const advance = async (expected: string) =>
      expect
        .poll(async () => {
          await page.clock.runFor(COMMAND_POLL_MS);
          return stateOf(page, id);
        })
        .toBe(expected);
    await expect
      .poll(() =>
        page
          .locator(`tr[data-command-id="${id}"]`)
          .getByRole('button', { name: `Cancel ${advertised.command}` })
          .count(),
      )
      .toBe(1);
    await advance('Delivered');
    // Fetched, it may be running: it is no longer offered to cancel.
    expect(await page.locator(`tr[data-command-id="${id}"]`).getByRole('button').count()).toBe(0);
    const reported = await kiosk.main.POST('/device/commands/{commandId}/status', {
      params: { path: { commandId: id } },
      body: { state: 'SUCCEEDED', message: 'Printed 2 pages.', output: { pages: 2, markup: '<b>not bold</b>' } },
    });
    expect(reported.response.status).toBe(204);
    await advance('Succeeded');
    const row = page.locator(`tr[data-command-id="${id}"]`);
    expect(await row.textContent()).toContain('Printed 2 pages.');
    // The output is JSON as text: its markup is not an element.
    expect(await row.locator('pre.command-output').textContent()).toBe(JSON.stringify({ pages: 2, markup: '<b>not bold</b>' }, null, 2));
    expect(await row.locator('pre.command-output b').count()).toBe(0);
    await page
      .getByRole('status')
      .filter({ hasText: `${advertised.command} on ${target.label}: Succeeded.` })
      .waitFor({ state: 'attached' });
    expect(await row.getByRole('button').count()).toBe(0);

    // Nothing is pending: no more reads, however long the page stays.
    const after = reads();
    await page.clock.runFor(10 * COMMAND_POLL_MS);
    expect(reads()).toBe(after);
    expect(await page.evaluate('window.sameDocument')).toBe(true);
    await expectAccessible(page, 'device page with a command that succeeded');
    await screenshot(page, 'console-device-commands.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('closes the form with Escape, cancels a pending command, and shows the detail of one no longer advertised', {
    timeout: 180_000,
  }, async () => {
    const target = await firstAdvertiser(devices[1] as string);
    const advertised = target.advertised[0] as Advertiser['advertised'][number];
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${target.deviceId}`);
    const run = page.getByRole('button', { name: `Run ${advertised.title} on ${target.label}`, exact: true }).first();
    const form = page.getByRole('region', { name: `Run ${advertised.title} on ${target.label}` });
    const submit = form.getByRole('button', { name: `Run ${advertised.title} on ${target.label}` });

    // Escape closes the form and gives the focus back to the button that opened it.
    await run.click();
    await form.getByLabel('Arguments (JSON)').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => form.count()).toBe(0);
    expect(await focused(page)).toBe(`button Run ${advertised.title} on ${target.label}`);

    // Queued with the keyboard alone (the prefilled arguments), then cancelled: the focus goes to the outcome.
    await page.keyboard.press('Enter');
    await submit.waitFor();
    await submit.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `${advertised.title} on ${target.label}: Queued.` })
      .waitFor();
    const [queued] = await commandsOf(target.deviceId);
    const id = queued?.id as string;
    await expect.poll(() => stateOf(page, id)).toBe('Queued');
    await page.getByRole('button', { name: `Cancel ${advertised.command}` }).click();
    await expect.poll(() => stateOf(page, id)).toBe('Cancelled');
    await page
      .getByRole('status')
      .filter({ hasText: `${advertised.command} on ${target.label}: Cancelled.` })
      .waitFor();
    expect(await focused(page)).toBe(`p ${advertised.command} on ${target.label}: Cancelled.`);
    expect((await commandsOf(target.deviceId)).map((command) => command.state)).toEqual(['CANCELLED']);

    // The kiosk reports its health again, its sub-devices advertising nothing now: the page, read before, still
    // offers the command, and the service's refusal (409 COMMAND_NOT_ADVERTISED) shows its detail in the form.
    const device = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/devices/{deviceId}', {
        params: { path: { companyId: 'acme', deviceId: target.deviceId } },
      }),
    );
    const { updated: _updated, ...health } = device.health as NonNullable<typeof device.health>;
    const silent = {
      ...health,
      hubs: health.hubs.map((hub) => ({ ...hub, devices: hub.devices.map((sub) => ({ ...sub, commands: [] })) })),
    };
    const kiosk = clientFor(local.service, await kioskToken(target.deviceId));
    expect((await kiosk.main.PUT('/device/health', { body: silent })).response.status).toBe(204);
    await run.click();
    await submit.click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/advertise/i);
    await expect.poll(() => focused(page)).toBe(`p ${(await alert.textContent()) ?? ''}`);
    expect(await commandsOf(target.deviceId)).toHaveLength(1);
    await expectAccessible(page, 'run form with the service refusal');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a viewer the commands and their history, with no Run or Cancel', { timeout: 120_000 }, async () => {
    const target = await firstAdvertiser(devices[2] as string);
    const advertised = target.advertised[0] as Advertiser['advertised'][number];
    const queued = expectOk(
      await alice().main.POST('/companies/{companyId}/resources/devices/{deviceId}/commands', {
        params: { path: { companyId: 'acme', deviceId: target.deviceId } },
        body: { hub: target.hub, device: target.uid, command: advertised.command },
      }),
    );
    const { page, errors } = await signedIn(browser, local.service, 'olivia', `#/devices/acme/${target.deviceId}`);
    await expect.poll(() => stateOf(page, queued.id)).toBe('Queued');
    await page
      .getByRole('table', { name: `Commands of ${target.label} (hub` })
      .first()
      .waitFor();
    expect(
      await page
        .getByRole('table', { name: `Commands of ${target.label} (hub` })
        .first()
        .textContent(),
    ).toContain(advertised.title);
    expect(await page.getByRole('button', { name: /^Run / }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Cancel / }).count()).toBe(0);
    await expectAccessible(page, 'device page of a viewer, with a pending command');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('runs a command on a searched fleet in two waves: wave 1 failing above the threshold pauses it, and its page shows why', {
    timeout: 240_000,
  }, async () => {
    const code = `cmd-e2e-${Date.now().toString(36)}`;
    const { ids, tokens } = await commandFleet(code, 'run-diagnostics');
    const [first, second, third] = ids as [string, string, string];
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/fleet?health.versionCode=${code}`);

    // The form: the command suggested from what the five advertise, previewed by the service before it starts.
    await page.getByRole('button', { name: 'Run a command on these 5 devices…' }).click();
    await expect.poll(() => focused(page)).toBe('command-compose-title');
    const form = page.getByRole('region', { name: /^Run a command on 5 devices of acme/ });
    await form.getByText('Advertised by these devices: run-diagnostics (4 devices), beep (1 device)').waitFor();
    await form.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => focused(page)).toBe('command-rollout-command');
    expect(await form.getByLabel('Command', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('Command', { exact: true }).fill('run-diagnostics');
    await form.getByLabel('Arguments (JSON)').fill('{ "level": "full" }');
    await form.getByLabel('Wave sizes').fill('3');
    await form.getByLabel('Failure threshold (%)').fill('10');
    await form.getByLabel('Note', { exact: true }).fill('Console e2e: diagnostics');
    await form.getByRole('button', { name: 'Preview' }).click();
    const preview = form.getByRole('region', { name: 'Preview' });
    await preview.waitFor();
    expect(await preview.locator('.command-preview-advertising').textContent()).toBe(
      '4 of 5 devices advertise run-diagnostics: each gets it, 5 commands in all (one per sub-device that advertises it).',
    );
    expect(await preview.locator('.command-preview-missing').textContent()).toBe(
      '1 device advertises it nowhere: each will fail with the cause Command not advertised.',
    );
    const types = await preview.getByRole('table', { name: 'Commands by sub-device type' }).locator('tbody tr').allTextContents();
    expect(types).toEqual(['Printer4', 'Payment1']);
    expect(await preview.locator('.command-preview-waves').textContent()).toBe('Wave 1: 3, wave 2: 2');
    await expectAccessible(page, 'command rollout form with its preview');
    await screenshot(page, 'console-command-rollout-form.png');

    // Started: the rollout's page, and the rollout as the API holds it.
    await form.getByRole('button', { name: 'Start: run run-diagnostics on 5 devices' }).click();
    await expect.poll(() => new URL(page.url()).hash, { timeout: 15_000 }).toMatch(/^#\/rollouts\/acme\/[0-9A-Za-z]+$/);
    const rolloutId = new URL(page.url()).hash.split('/')[3] ?? '';
    const rollout = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
        params: { path: { companyId: 'acme', rolloutId } },
      }),
    );
    expect(rollout).toMatchObject({
      action: 'COMMAND',
      command: { command: 'run-diagnostics', arguments: { level: 'full' }, expiresInSeconds: 3_600 },
      failureThreshold: 0.1,
      note: 'Console e2e: diagnostics',
      targets: 5,
    });
    expect(rollout.waves.map((wave) => wave.size)).toEqual([3, 2]);
    await page.locator('.rollout-command').filter({ hasText: 'run-diagnostics' }).waitFor();
    expect(await page.locator('pre.rollout-arguments').textContent()).toBe(JSON.stringify({ level: 'full' }, null, 2));

    // Wave 1 is the first three kiosks: the second advertises nothing of it; the test, as the others, reports.
    const [printer, terminal] = await pulled(tokens.get(first) as string, 2).then((commands) =>
      [...commands].sort((a, b) => a.device.localeCompare(b.device)).reverse(),
    );
    await report(tokens.get(first) as string, printer?.id as string, 'FAILED', 'Paper jam in the receipt printer');
    await report(tokens.get(first) as string, terminal?.id as string, 'SUCCEEDED', 'Terminal diagnostics passed');
    const [third1] = await pulled(tokens.get(third) as string, 1);
    await report(tokens.get(third) as string, third1?.id as string, 'FAILED', 'Paper jam in the receipt printer');

    // Two of its three commands FAILED, above 10 %: paused, and the page shows who failed and why, without a reload.
    await expect.poll(() => page.locator('.rollout-state').textContent(), { timeout: 30_000 }).toBe('Paused');
    await page.locator('.paused-reason').waitFor();
    const waves = page.getByRole('table', { name: `Waves of rollout ${rolloutId}` });
    const headings = await waves.locator('thead th').allTextContents();
    const wave1 = await waves.locator('tbody tr').first().locator('th, td').allTextContents();
    const row = Object.fromEntries(headings.map((heading, index) => [heading, wave1[index]]));
    expect(row).toMatchObject({
      Size: '3',
      'Targets with the command': '2',
      'Command not advertised': '1',
      'Commands queued': '3',
      Succeeded: '1',
      Failed: '2',
    });
    const failed = page.getByRole('list', { name: 'Command failed: Paper jam in the receipt printer' });
    await failed.waitFor();
    expect(await failed.getByRole('link').allTextContents()).toEqual([first, third]);
    expect(await page.getByRole('list', { name: 'No command: Command not advertised' }).getByRole('link').allTextContents()).toEqual([
      second,
    ]);

    // The targets listing, filtered on the failed commands: each device with its commands' states and messages.
    await page.getByLabel('Show the targets').selectOption({ label: 'With a command that failed' });
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/rollouts/acme/${rolloutId}?commandState=FAILED`);
    const targets = page.getByRole('table', { name: /^Targets of rollout .*: with a command that failed/ });
    await expect.poll(() => targets.locator('tbody tr').count()).toBe(2);
    const firstRow = (await targets.locator(`tr[data-device-id="${first}"]`).textContent()) ?? '';
    expect(firstRow).toContain('Failed — Paper jam in the receipt printer');
    expect(firstRow).toContain('Succeeded — Terminal diagnostics passed');
    await expectAccessible(page, 'paused command rollout page');
    await screenshot(page, 'console-command-rollout.png');
    expect(errors).toEqual([]);
    await page.close();
  });
});
