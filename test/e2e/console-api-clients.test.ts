/**
 * End-to-end over `npm start`, in headless Chromium: the console's API clients page. Root (a platform administrator)
 * creates a client of acme through the page, sees its secret once (gone after a reload), opens it, rotates the secret
 * (the new one once, with until when the previous one works), disables, enables, renames it with a lower role and
 * deletes it; the table shows the clients as the API lists them. A company administrator of acme (invited here by root) is offered only acme, creates
 * a client there, and a pasted address of a globex client shows the service's refusal. An operator (alice) is not
 * offered the page. Each page is axe clean in light and dark, and screenshots are saved.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { clientRoleName } from '../../console/src/admin/client-roles.js';
import { dateTime } from '../../console/src/format.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, screenshot, signedIn, signInWith } from './console-harness.js';
import { clientFor, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console API clients tests');

const local = useLocalService({ users: ['root', 'alice'] });

type ApiClient = components['schemas']['ApiClient'];

/** The company administrator the test invites, and the password they choose. */
const ADMIN = 'carla';
const ADMIN_PASSWORD = 'Carla-chosen-pass-1!';

let browser: Browser;

const root = () => clientFor(local.service, local.tokens.root).main;

/** The clients of `company` as the API lists them to root. */
async function clientsOf(company: string): Promise<ApiClient[]> {
  return expectOk(await root().GET('/admin/api-clients', { params: { query: { company } } })).items;
}

/** The body rows of the table named `caption`, each as its cells' trimmed texts. */
async function tableRows(page: Page, caption: string): Promise<string[][]> {
  const table = page.getByRole('table', { name: caption, exact: true });
  await table.waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((rows: { children: ArrayLike<{ textContent: string | null }> }[]) =>
      rows.map((row) => Array.from(row.children, (cell) => (cell.textContent ?? '').trim())),
    );
}

/** A client's row as the table shows it. */
const rowOf = (client: ApiClient) => [
  client.name,
  client.clientId,
  client.company,
  clientRoleName(client.role),
  client.enabled ? 'Yes' : 'No',
  client.lastUsedAt === undefined ? 'Never' : dateTime(client.lastUsedAt),
  client.previousSecretExpiresAt === undefined ? '—' : dateTime(client.previousSecretExpiresAt),
];

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  // Root invites a company administrator of acme, who sets their password.
  const invited = expectOk(
    await root().POST('/admin/users', {
      body: { username: ADMIN, email: 'carla@acme.example', role: 'company-admin', companies: ['acme'] },
    }),
  );
  expectOk(
    await clientFor(local.service).auth.POST('/token', {
      body: { username: ADMIN, password: invited.temporaryPassword as string, new_password: ADMIN_PASSWORD },
    }),
  );
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console API clients page', () => {
  it('lets root create a client, shows its secret once, rotates it, disables, enables, changes and deletes the client', {
    timeout: 120_000,
  }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/users');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'API clients' }).click();
    await page.getByRole('heading', { level: 1, name: 'API clients' }).waitFor();
    expect(page.url()).toContain('#/admin/api-clients');
    expect(await page.getByRole('link', { name: 'API clients' }).getAttribute('aria-current')).toBe('page');

    const form = page.getByRole('form', { name: 'Create an API client' });
    await form.getByLabel('Name').fill('Store back office');
    await form.getByRole('combobox', { name: /^Company/ }).selectOption('acme');
    const roles = form.getByRole('group', { name: 'Role' });
    expect(await roles.getByRole('radio').count()).toBe(2);
    expect(await roles.getByRole('radio', { name: /^Viewer/ }).isChecked()).toBe(true);
    await roles.getByRole('radio', { name: /^Operator/ }).check();
    await expectAccessible(page, 'the API clients page with the filled form');
    await form.getByRole('button', { name: 'Create the API client' }).click();

    // The secret, once, with the words that say so; the API never shows it again.
    const secretField = form.getByLabel('Client secret', { exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    await form.getByText('This secret is not shown again.').waitFor();
    await form.getByRole('button', { name: 'Copy secret' }).waitFor();
    const [created] = await clientsOf('acme');
    expect(created).toMatchObject({ name: 'Store back office', company: 'acme', role: 'operator', enabled: true, createdBy: 'root' });
    expect(JSON.stringify(created)).not.toContain(secret);
    await form
      .getByRole('status')
      .filter({ hasText: `with the client id ${created?.clientId}` })
      .waitFor();
    // The form is emptied for the next one.
    expect(await form.getByLabel('Name').inputValue()).toBe('');
    await expect
      .poll(async () => (await tableRows(page, 'Every API client')).find((row) => row[1] === created?.clientId))
      .toEqual(rowOf(created as ApiClient));
    await expectAccessible(page, 'the API clients page with a secret shown');
    await screenshot(page, 'console-api-clients-created.png');

    // The company filter is in the URL, and a reload forgets the secret: it was in the page's state only.
    await page.getByRole('combobox', { name: 'Company' }).first().selectOption('acme');
    await page.getByRole('table', { name: 'API clients of acme' }).waitFor();
    expect(page.url()).toContain('#/admin/api-clients?company=acme');
    await page.reload();
    await page.getByRole('table', { name: 'API clients of acme' }).waitFor();
    expect(await page.getByLabel('Client secret', { exact: true }).count()).toBe(0);

    await openAndChange(page, created as ApiClient, secret);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers a company administrator only their companies, and shows the refusal of another company’s client', {
    timeout: 120_000,
  }, async () => {
    const globex = expectOk(await root().POST('/admin/api-clients', { body: { name: 'Globex ERP', company: 'globex', role: 'viewer' } }));
    const { page, errors } = await openConsole(browser, local.service, '#/admin/api-clients');
    await signInWith(page, ADMIN, ADMIN_PASSWORD);
    await page.getByRole('heading', { level: 1, name: 'API clients' }).waitFor();
    // Their first company is written into the URL; no "All companies", and the form offers acme only.
    await expect.poll(() => page.url()).toContain('#/admin/api-clients?company=acme');
    const filter = page.locator('.toolbar').getByRole('combobox', { name: 'Company' });
    expect(await filter.locator('option').allTextContents()).toEqual(['acme']);
    const form = page.getByRole('form', { name: 'Create an API client' });
    expect(
      await form
        .getByRole('combobox', { name: /^Company/ })
        .locator('option')
        .allTextContents(),
    ).toEqual(['acme']);
    await form.getByLabel('Name').fill('Kiosk reports');
    await form.getByRole('button', { name: 'Create the API client' }).click();
    await form.getByLabel('Client secret', { exact: true }).waitFor();
    const made = (await clientsOf('acme')).find((client) => client.name === 'Kiosk reports');
    expect(made).toMatchObject({ company: 'acme', role: 'viewer', createdBy: ADMIN });
    expect(JSON.stringify(await tableRows(page, 'API clients of acme'))).not.toContain('Globex ERP');
    await expectAccessible(page, 'the API clients page of a company administrator');
    await screenshot(page, 'console-api-clients.png');

    await page.goto(`${local.service.api}/console#/admin/api-clients?company=acme&client=${globex.clientId}`);
    await page.getByRole('alert').filter({ hasText: /./ }).first().waitFor();
    expect(await page.getByRole('region', { name: 'API client Globex ERP' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers an operator no API clients page', { timeout: 60_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/fleet');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Fleet' }).waitFor();
    expect(await page.getByRole('link', { name: 'API clients' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});

/**
 * Opens `client` from the table, rotates its secret, disables and enables it, renames it and lowers its role, then
 * deletes it, checking the API each time.
 */
async function openAndChange(page: Page, client: ApiClient, secret: string): Promise<void> {
  await page.getByRole('table', { name: 'API clients of acme' }).getByRole('link', { name: client.name }).click();
  const panel = page.getByRole('region', { name: `API client ${client.name}` });
  await panel.waitFor();
  expect(page.url()).toContain(`client=${client.clientId}`);

  // Rotate: Cancel changes nothing; confirmed, the new secret shows once with until when the previous one works.
  await panel.getByRole('button', { name: 'Rotate secret' }).click();
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Rotate secret');
  await panel.getByRole('button', { name: 'Rotate secret' }).click();
  await panel.getByRole('button', { name: 'Rotate the secret' }).click();
  const rotated = await panel.getByLabel('Client secret', { exact: true }).inputValue();
  expect(rotated).not.toBe(secret);
  await panel.getByText(/The previous secret keeps working beside it until/).waitFor();
  const [afterRotation] = await clientsOf('acme');
  expect(afterRotation?.previousSecretExpiresAt).toBeDefined();
  await expect
    .poll(async () => (await tableRows(page, 'API clients of acme'))[0]?.[6])
    .toBe(dateTime(afterRotation?.previousSecretExpiresAt));
  await expectAccessible(page, 'an API client with its rotated secret');

  // Disable, enable, then delete (confirmed): the list is empty again.
  await panel.getByRole('button', { name: 'Disable' }).click();
  await panel.getByText(/The API client is disabled/).waitFor();
  expect((await clientsOf('acme'))[0]?.enabled).toBe(false);
  await panel.getByRole('button', { name: 'Enable' }).click();
  await panel.getByText(/The API client is enabled/).waitFor();
  expect((await clientsOf('acme'))[0]?.enabled).toBe(true);

  // Rename it and lower its role: only what changed is sent, and the table follows.
  const edit = panel.getByRole('form', { name: 'Change the API client' });
  expect(await edit.getByRole('radio', { name: /^Operator/ }).isChecked()).toBe(true);
  await edit.getByRole('button', { name: 'Save the changes' }).click();
  await edit.getByText('Nothing to save: the name and role are as they were.').waitFor();
  const renamed = `${client.name} (Lyon)`;
  await edit.getByLabel('Name').fill(renamed);
  await edit
    .getByRole('group', { name: 'Role' })
    .getByRole('radio', { name: /^Viewer/ })
    .check();
  await edit.getByRole('button', { name: 'Save the changes' }).click();
  await edit.getByText('Changes saved.').waitFor();
  expect((await clientsOf('acme'))[0]).toMatchObject({ name: renamed, role: 'viewer', enabled: true });
  await expect
    .poll(async () => (await tableRows(page, 'API clients of acme'))[0]?.slice(0, 4))
    .toEqual([renamed, client.clientId, 'acme', 'Viewer']);

  const renamedPanel = page.getByRole('region', { name: `API client ${renamed}` });
  await renamedPanel.getByRole('button', { name: 'Delete API client' }).click();
  await renamedPanel.getByRole('button', { name: 'Delete the API client' }).click();
  await page.getByText(`The API client ${renamed} is deleted.`).waitFor();
  await page.getByText('No API client yet.').waitFor();
  expect(page.url()).not.toContain('client=');
  expect(await clientsOf('acme')).toEqual([]);
}
