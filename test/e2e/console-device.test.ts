/**
 * The console's device page in Chromium against the local service: it shows the device resource as the API holds it
 * (health, sub-devices, messages), deploys and undeploys a version, shows the status the device reports, issues new
 * credentials that work, deletes the device, offers a read-only user no action, and shows device texts as text.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { humanize } from '../../console/src/format.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, deviceTokenRequest, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();

/**
 * What has the keyboard focus: its tag, its role if it has one, and its words (`button Issue new credentials`,
 * `p[status] Deploy …: SUCCESS`); `body` when the focus was lost.
 */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const element = document.activeElement;
    if (element === null) return '';
    const role = element.getAttribute('role');
    const words = element === document.body ? '' : (element.textContent ?? '').replace(/\\s+/g, ' ').trim();
    return (element.tagName.toLowerCase() + (role === null ? '' : '[' + role + ']') + ' ' + words).trim();
  })()`) as Promise<string>;
}

describe.skipIf(!hasChromium)('the console device page', () => {
  const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });
  let browser: Browser;
  /** An acme device whose sub-devices have messages (found through search). */
  let withMessages: string;
  /** A scenario version of acme, deployed from the page. */
  let scenario: string;
  let version: string;

  const alice = () => clientFor(local.service, local.tokens.alice);
  const getDevice = (deviceId: string) =>
    alice().main.GET('/companies/{companyId}/resources/devices/{deviceId}', { params: { path: { companyId: 'acme', deviceId } } });
  const activeOn = async (deviceId: string) =>
    expectOk(
      await alice().main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: 'acme', deviceId }, query: { limit: 100 } },
      }),
    ).items.map((item) => `${item.what.id}@${item.what.subId}`);

  beforeAll(async () => {
    browser = await launchChromium();
    let found: string | undefined;
    await eventually(async () => {
      const page = expectOk(
        await alice().main.GET('/resources/search', {
          params: { query: { company: ['acme'], 'health.hubs.devices.health.state': ['WARNING'], pageSize: 50 } },
        }),
      );
      const hubsOf = (resource: (typeof page.resources)[number]) => (resource.type === 'DEVICE' ? (resource.health?.hubs ?? []) : []);
      const candidates = page.resources.filter((resource) =>
        hubsOf(resource).some((hub) => hub.devices.some((sub) => sub.health.messages.length > 0)),
      );
      // Preferably one with a battery, so that the page shows one too.
      found = (candidates.find((resource) => hubsOf(resource).some((hub) => hub.battery !== undefined)) ?? candidates[0])?.id;
      return found !== undefined;
    }, 'an acme device with sub-device messages in search');
    withMessages = found as string;
    const scenarios = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' } } }),
    );
    const first = scenarios.items[0];
    if (first === undefined) throw new Error('acme has no scenario');
    scenario = first.id;
    version = first.versions[0] as string;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("shows each sub-device's label, state and messages as the device resource holds them", { timeout: 120_000 }, async () => {
    const device = expectOk(await getDevice(withMessages));
    const subs = (device.health?.hubs ?? []).flatMap((hub) => hub.devices);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${withMessages}`);
    await page.getByRole('heading', { level: 1, name: new RegExp(withMessages) }).waitFor();
    await page.getByRole('heading', { name: 'Health', exact: true }).waitFor();
    const sections = page.locator('section.sub-device');
    await expect.poll(() => sections.count()).toBe(subs.length);
    for (const [index, sub] of subs.entries()) {
      const section = sections.nth(index);
      expect(await section.getByRole('heading', { level: 4 }).textContent()).toBe(sub.label);
      const text = (await section.textContent()) ?? '';
      expect(text).toContain(humanize(sub.health.state));
      if (sub.battery !== undefined) expect(text).toContain(`${sub.battery.health.level}%`);
      for (const message of sub.health.messages) {
        expect(text).toContain(message.message);
        expect(text).toContain(message.key);
      }
      if (sub.health.messages.length > 0) {
        await section.getByRole('table', { name: `Messages of ${sub.label}` }).waitFor();
      }
    }
    expect(await page.getByText(device.serial, { exact: true }).count()).toBeGreaterThan(0);
    for (const hub of device.health?.hubs ?? []) {
      const text =
        (await page
          .getByRole('region', { name: `Hub ${hub.label}` })
          .first()
          .textContent()) ?? '';
      expect(text).toContain(hub.uid);
      if (hub.battery !== undefined)
        expect(text).toContain(`${hub.battery.health.level}%, ${hub.battery.health.status.toLowerCase().replace(/_/g, ' ')}`);
    }
    await expectAccessible(page, 'device page');
    await screenshot(page, 'console-device.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('deploys a version, shows the status the device reports, issues working credentials and undeploys', { timeout: 180_000 }, async () => {
    const deviceId = 'acme-kiosk-0002';
    const chosen = `${scenario}@${version}`;
    expect(await activeOn(deviceId)).not.toContain(chosen);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${deviceId}`);

    // Deploy from the form.
    await page.getByLabel('Scenario version').selectOption({ label: chosen });
    await page.getByRole('button', { name: `Deploy ${chosen}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Deploy ${chosen}: SUCCESS` })
      .waitFor();
    const active = page.getByRole('table', { name: /Active deployments/ });
    await active.getByRole('row', { name: new RegExp(chosen.replace(/\./g, '\\.')) }).waitFor();
    expect(await activeOn(deviceId)).toContain(chosen);
    // The history (derived a moment after the action) shows the deploy without a reload.
    await page
      .getByRole('table', { name: /History/ })
      .getByRole('row', { name: new RegExp(`Deploy ${chosen.replace(/\./g, '\\.')} Success`) })
      .waitFor();

    // New credentials: confirmed, shown once, and they work.
    await page.getByRole('button', { name: 'Issue new credentials' }).click();
    await page.getByRole('button', { name: `Replace the secret of ${deviceId}` }).click();
    const secretField = page.getByLabel('Client secret');
    await secretField.waitFor();
    await page.getByRole('button', { name: 'Copy secret' }).waitFor();
    await page.getByText('This secret will not be shown again.').waitFor();
    const clientId = await page.getByLabel('Client id').inputValue();
    const clientSecret = await secretField.inputValue();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: local.service.api });
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByRole('status').filter({ hasText: 'The secret is copied to the clipboard.' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(clientSecret);
    await expectAccessible(page, 'device page with a deployment and new credentials');
    expect(clientId).toBe(`acme~${deviceId}`);
    const exchanged = await deviceTokenRequest(local.service, clientId, clientSecret);
    expect(exchanged.response.status).toBe(200);
    const deviceToken = (exchanged.data as { access_token: string }).access_token;

    // The device reports its install; the page shows it after a reload, and the secret is gone.
    const reported = await clientFor(local.service, deviceToken).main.POST('/device/deployments/status', {
      body: { what: { type: 'SCENARIO', id: scenario, subId: version }, state: 'INSTALLED', message: 'Running since the console test' },
    });
    expect(reported.response.status).toBe(204);
    // The history's status entry is derived from the table's stream: waited for, so the reload shows it too.
    await eventually(async () => {
      const history = expectOk(
        await alice().main.GET('/companies/{companyId}/resources/deployments/history', {
          params: { path: { companyId: 'acme' }, query: { deviceId } },
        }),
      );
      return history.items.some((entry) => entry.kind === 'DEVICE_STATUS');
    }, 'the status report in the history');
    await page.reload();
    const row = page
      .getByRole('table', { name: /Active deployments/ })
      .getByRole('row', { name: new RegExp(chosen.replace(/\./g, '\\.')) });
    await row.waitFor();
    expect(await row.textContent()).toContain('Installed: Running since the console test');
    expect(await page.getByLabel('Client secret').count()).toBe(0);
    await page
      .getByRole('table', { name: /History/ })
      .getByRole('row', { name: /Device status/ })
      .first()
      .waitFor();

    // Undeploy, confirmed.
    await page.getByRole('button', { name: `Undeploy ${chosen}` }).click();
    await page.getByRole('button', { name: `Confirm: undeploy ${chosen}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Undeploy ${chosen}: SUCCESS` })
      .waitFor();
    await page.getByText('Nothing is deployed on this device.').waitFor();
    expect(await activeOn(deviceId)).not.toContain(chosen);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the keyboard focus on the page: Cancel returns it to the opening button, a deploy to its button, an undeploy to its outcome', {
    timeout: 120_000,
  }, async () => {
    const deviceId = 'acme-kiosk-0005';
    const chosen = `${scenario}@${version}`;
    expect(await activeOn(deviceId)).not.toContain(chosen);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${deviceId}`);

    // New credentials, cancelled by keyboard: the focus goes back to the button that opened the confirmation.
    await page.getByRole('button', { name: 'Issue new credentials' }).click();
    await expect.poll(() => focused(page)).toBe(`button Replace the secret of ${deviceId}`);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button Cancel');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('button Issue new credentials');
    expect(await page.getByLabel('Client secret').count()).toBe(0);

    // A deploy: its button is disabled while it runs, then has the focus again.
    await page.getByLabel('Scenario version').selectOption({ label: chosen });
    await page.getByRole('button', { name: `Deploy ${chosen}` }).focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Deploy ${chosen}: SUCCESS` })
      .waitFor();
    await expect.poll(() => focused(page)).toBe(`button Deploy ${chosen}`);
    expect(await activeOn(deviceId)).toContain(chosen);

    // An undeploy, cancelled: back to the row's button; then confirmed: its row is gone, the focus is on its outcome.
    await page.getByRole('button', { name: `Undeploy ${chosen}` }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe(`button Confirm: undeploy ${chosen}`);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe(`button Undeploy ${chosen}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe(`button Confirm: undeploy ${chosen}`);
    await page.keyboard.press('Enter');
    await page.getByText('Nothing is deployed on this device.').waitFor();
    await expect.poll(() => focused(page)).toBe(`p[status] Undeploy ${chosen}: SUCCESS`);
    expect(await activeOn(deviceId)).not.toContain(chosen);
    // Tab goes on from there, in the page's order: the next control after the active deployments.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatch(/^select /);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('links back to the fleet as the user left it, with its search', { timeout: 120_000 }, async () => {
    const servers = expectOk(
      await alice().main.GET('/resources/search', { params: { query: { type: ['DEVICE'], 'health.mode': ['SERVER'] } } }),
    );
    const deviceId = servers.resources[0]?.id as string;
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/fleet?type=DEVICE&health.mode=SERVER');
    await page
      .getByRole('status')
      .filter({ hasText: `${servers.total} devices match` })
      .waitFor();
    const fleetHash = (await page.evaluate('location.hash')) as string;
    expect(fleetHash).toContain('health.mode=SERVER');
    await page.getByRole('link', { name: deviceId, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(deviceId) }).waitFor();
    await page.getByRole('link', { name: 'Back to the fleet' }).click();
    await expect.poll(() => page.evaluate('location.hash')).toBe(fleetHash);
    await page
      .getByRole('status')
      .filter({ hasText: `${servers.total} devices match` })
      .waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('deletes the device once its id is typed, then shows the fleet; its page then says it is not found', {
    timeout: 120_000,
  }, async () => {
    const deviceId = 'acme-kiosk-0003';
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${deviceId}`);
    const button = page.getByRole('button', { name: `Delete device ${deviceId}` });
    const field = page.getByLabel(`Type ${deviceId} to confirm`);
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    await field.fill('acme-kiosk-000');
    expect(await button.isDisabled()).toBe(true);
    await field.fill(deviceId);
    expect(await button.isEnabled()).toBe(true);
    await button.click();
    await page.waitForURL(/#\/fleet$/);
    expect((await getDevice(deviceId)).response.status).toBe(404);

    await page.goto(`${local.service.api}/console#/devices/acme/${deviceId}`);
    await page.getByRole('heading', { level: 1, name: 'Device not found' }).waitFor();
    await page.getByRole('link', { name: 'Go to the fleet' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says why, in an alert, when the service refuses the device to the user', { timeout: 120_000 }, async () => {
    const refused = await clientFor(local.service, local.tokens.bob).main.GET('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: 'acme', deviceId: withMessages } },
    });
    expect(refused.response.status).toBe(403);
    const detail = (refused.error as { detail: string }).detail;
    // The device's own answer is held until the history's and the active deployments' (refused alike) are in and
    // drawn: the order in which the page would otherwise show their messages first, then replace them with its own.
    const { page, errors } = await signedIn(browser, local.service, 'bob');
    const othersAnswered = Promise.all(
      [`/resources/deployments/history?deviceId=${withMessages}`, `/resources/${withMessages}/deployments?`].map((part) =>
        page.waitForResponse((response) => response.url().includes(part)),
      ),
    );
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(
      (url) => url.pathname.endsWith(`/resources/devices/${withMessages}`),
      async (route) => {
        await released;
        await route.continue();
      },
    );
    await page.goto(`${local.service.api}/console#/devices/acme/${withMessages}`);
    await Promise.all((await othersAnswered).map((response) => response.finished()));
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const alertsBeforeTheDevice = await page.getByRole('alert').count();
    const historyLoading = await page.getByText('Loading the history…').count();
    release();
    await page.getByRole('alert').filter({ hasText: detail }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(alertsBeforeTheDevice).toBe(0);
    expect(historyLoading).toBe(1);
    expect(await page.locator('section.sub-device').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a read-only user everything and offers no action', { timeout: 120_000 }, async () => {
    const chosen = `${scenario}@${version}`;
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'acme' } },
        body: {
          requests: [
            {
              target: { type: 'DEVICE', id: withMessages, subId: null },
              what: { type: 'SCENARIO', id: scenario, subId: version },
              action: 'DEPLOY',
            },
          ],
        },
      }),
    );
    // The history is derived from the deployments table's stream: waited for, so the page has one to show.
    await eventually(
      async () =>
        expectOk(
          await alice().main.GET('/companies/{companyId}/resources/deployments/history', {
            params: { path: { companyId: 'acme' }, query: { deviceId: withMessages } },
          }),
        ).items.length > 0,
      'the deploy in the history',
    );
    const device = expectOk(await getDevice(withMessages));
    const { page, errors } = await signedIn(browser, local.service, 'olivia', `#/devices/acme/${withMessages}`);
    await page.getByRole('heading', { name: 'Health', exact: true }).waitFor();
    const subs = (device.health?.hubs ?? []).flatMap((hub) => hub.devices);
    await expect.poll(() => page.locator('section.sub-device').count()).toBe(subs.length);
    await page
      .getByRole('table', { name: /Active deployments/ })
      .getByRole('row', { name: new RegExp(chosen.replace(/\./g, '\\.')) })
      .waitFor();
    await page.getByRole('table', { name: /History/ }).waitFor();
    for (const name of [/^Deploy /, /^Undeploy /, /Issue new credentials/, /^Delete device/]) {
      expect(await page.getByRole('button', { name }).count(), String(name)).toBe(0);
    }
    expect(await page.getByLabel('Scenario version').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists the history newest first, a page at a time with "Show more history"', { timeout: 120_000 }, async () => {
    const deviceId = 'acme-kiosk-0004';
    const what = { type: 'SCENARIO' as const, id: scenario, subId: version };
    const target = { type: 'DEVICE' as const, id: deviceId, subId: null };
    // 24 actions (entries on one device and version run in order): more than one page of 20.
    const requests = Array.from({ length: 24 }, (_, index) => ({
      target,
      what,
      action: index % 2 === 0 ? ('DEPLOY' as const) : ('UNDEPLOY' as const),
    }));
    const results = expectOk(
      await alice().main.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'acme' } },
        body: { requests },
      }),
    );
    expect(results.items.every((item) => item.state === 'SUCCESS')).toBe(true);
    const history = async () =>
      expectOk(
        await alice().main.GET('/companies/{companyId}/resources/deployments/history', {
          params: { path: { companyId: 'acme' }, query: { deviceId, limit: 100 } },
        }),
      ).items;
    await eventually(async () => (await history()).length === 24, 'the 24 actions in the history');
    const expected = await history();

    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${deviceId}`);
    const table = page.getByRole('table', { name: /History/ });
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(20);
    await page.getByRole('button', { name: 'Show more history' }).click();
    await expect.poll(() => rows.count()).toBe(24);
    expect(await page.getByRole('button', { name: 'Show more history' }).count()).toBe(0);
    // Newest first, as the API lists them: the first row is the last UNDEPLOY, the last row the first DEPLOY.
    const shown = await rows.locator('td:nth-child(2)').allTextContents();
    expect(shown).toEqual(expected.map((entry) => (entry.kind === 'ACTION' ? humanize(entry.action) : 'Device status')));
    expect(shown[0]).toBe('Undeploy');
    expect(shown[23]).toBe('Deploy');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows device texts as text, never as markup', { timeout: 120_000 }, async () => {
    const deviceId = 'acme-markup-0001';
    const markup = '<img src=x onerror=alert(1)>';
    const put = await alice().main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: 'acme', deviceId } },
      body: {
        serial: `SN ${markup}`,
        location: { name: markup, description: `Behind ${markup}` },
        geoLocation: { latitude: 45.764, longitude: -4.8357, altitude: 170 },
      },
    });
    expect(put.response.status).toBe(201);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/devices/acme/${deviceId}`);
    let alerted = false;
    page.on('dialog', (dialog) => {
      alerted = true;
      void dialog.dismiss();
    });
    await page.getByRole('heading', { level: 1, name: new RegExp(`${deviceId}.*${markup.replace(/[()]/g, '\\$&')}`) }).waitFor();
    await page.getByText(`SN ${markup}`, { exact: true }).waitFor();
    await page.getByText(`Behind ${markup}`, { exact: true }).waitFor();
    await page.getByText('45.7640° N, 4.8357° W, 170 m', { exact: true }).waitFor();
    expect(await page.locator('img').count()).toBe(0);
    expect(alerted).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });
});
