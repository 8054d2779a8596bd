/**
 * End-to-end over `npm start`, in headless Chromium: the console's administration pages. The demo's platform
 * administrator (root) creates a company through the companies page, finds it listed as the API lists it, opens it
 * (its figures as the API's detail gives them) and changes its name and quota; root invites a user (the temporary
 * password shown once is the one that signs in), changes, resets and deletes them; a company administrator is
 * offered only their companies and the roles they may grant; the audit page shows the changes as the API lists them;
 * an operator (alice) is offered no administration.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { changeLines } from '../../console/src/admin/audit-text.js';
import { ROLES, roleName } from '../../console/src/admin/roles.js';
import { bytes, count, dateTime } from '../../console/src/format.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, screenshot, signedIn, signInWith } from './console-harness.js';
import { clientFor, expectError, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console administration tests');

const local = useLocalService({ users: ['root', 'alice'] });

const root = () => clientFor(local.service, local.tokens.root).main;

type AdminCompany = components['schemas']['AdminCompany'];
type User = components['schemas']['User'];
type AuditEntry = components['schemas']['AuditEntry'];

/** What the tests read of an element in the page (the root project has no DOM types). */
interface Element {
  textContent: string | null;
  children: ArrayLike<Element>;
}

/** The body rows of the table named `caption`, each as its cells' trimmed texts. */
async function tableRows(page: Page, caption: string): Promise<string[][]> {
  const table = page.getByRole('table', { name: caption, exact: true });
  await table.waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((rows: Element[]) => rows.map((row) => Array.from(row.children, (cell) => (cell.textContent ?? '').trim())));
}

/** The page's `dl.facts` as term → description. */
async function facts(page: Page): Promise<Record<string, string>> {
  const list = page.locator('dl.facts');
  await list.waitFor();
  const terms = await list.locator('dt').allTextContents();
  const descriptions = await list.locator('dd').allTextContents();
  return Object.fromEntries(terms.map((term, index) => [term, (descriptions[index] ?? '').trim()]));
}

/** Every company as root lists it, following every page. */
async function allCompanies(): Promise<AdminCompany[]> {
  const found: AdminCompany[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(await root().GET('/admin/companies', { params: { query: cursor === undefined ? {} : { cursor } } }));
    found.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

/** A company's row as the companies table shows it. */
const rowOf = (company: AdminCompany) => [
  company.id,
  company.name,
  bytes(company.usedBytes),
  bytes(company.quotaBytes),
  company.overQuota ? 'Over quota' : 'No',
];

/** The company's detail as the API gives it to root. */
async function detailOf(companyId: string) {
  return expectOk(await root().GET('/admin/companies/{companyId}', { params: { path: { companyId } } }));
}

/** The facts a company's page shows for the API's detail. */
function factsOf(detail: Awaited<ReturnType<typeof detailOf>>): Record<string, string> {
  return {
    Id: detail.id,
    Name: detail.name,
    'Storage used': bytes(detail.usedBytes),
    Quota: bytes(detail.quotaBytes),
    'Over quota': detail.overQuota ? 'Over quota: every upload is refused until the quota is raised above the storage used.' : 'No',
    Devices: count(detail.deviceCount),
    Users: count(detail.userCount),
  };
}

let browser: Browser;

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('the console companies administration', () => {
  it('lets root create a company on the page, lists it as the API does, and changes its name and quota', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/companies');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'Companies' }).getAttribute('aria-current')).toBe('page');
    await page.getByRole('heading', { level: 1, name: 'Companies' }).waitFor();

    const form = page.getByRole('form', { name: 'Create a company' });
    // New company ids are lower case (the API refuses `Initech` beside `initech`): the field says so before sending.
    await form.getByLabel('Company id').fill('Initech');
    expect(
      await form
        .getByLabel('Company id')
        .evaluate((input) => (input as { validity: { patternMismatch: boolean } }).validity.patternMismatch),
    ).toBe(true);
    await form.getByLabel('Company id').fill('initech');
    await form.getByLabel('Name').fill('Initech');
    await form.getByLabel('Amount').fill('10');
    await form.getByLabel('Unit').selectOption('MB');
    await form.getByRole('button', { name: 'Create the company' }).click();
    await form.getByRole('status').filter({ hasText: 'Company initech created.' }).waitFor();
    // The form is emptied for the next one, its unit back to GB.
    expect(await form.getByLabel('Company id').inputValue()).toBe('');
    expect(await form.getByLabel('Unit').inputValue()).toBe('GB');
    expect(await detailOf('initech')).toMatchObject({
      id: 'initech',
      name: 'Initech',
      quotaBytes: 10 * 1024 ** 2,
      usedBytes: 0,
      overQuota: false,
      deviceCount: 0,
    });

    // The listing is read again after the creation: the new company is in it, every row as the API lists it.
    const expected = (await allCompanies()).map(rowOf).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(expected.map((row) => row[0])).toEqual(['acme', 'globex', 'initech']);
    await expect
      .poll(async () => (await tableRows(page, 'Companies')).sort((a, b) => String(a[0]).localeCompare(String(b[0]))))
      .toEqual(expected);
    await expectAccessible(page, 'companies page');
    await screenshot(page, 'console-admin-companies.png');

    await form.getByRole('link', { name: 'Open initech' }).click();
    await page.getByRole('heading', { level: 1, name: 'Company initech' }).waitFor();
    expect(await facts(page)).toEqual(factsOf(await detailOf('initech')));

    const edit = page.getByRole('form', { name: 'Change the company' });
    expect(await edit.getByLabel('Name').inputValue()).toBe('Initech');
    expect(await edit.getByLabel('Amount').inputValue()).toBe('10');
    expect(await edit.getByLabel('Unit').inputValue()).toBe('MB');
    await edit.getByLabel('Name').fill('Initech Corp');
    await edit.getByLabel('Amount').fill('2.5');
    await edit.getByLabel('Unit').selectOption('GB');
    await edit.getByRole('button', { name: 'Save the changes' }).click();
    await edit.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    const changed = await detailOf('initech');
    expect(changed).toMatchObject({ name: 'Initech Corp', quotaBytes: 2.5 * 1024 ** 3 });
    expect(await facts(page)).toEqual(factsOf(changed));
    await expectAccessible(page, 'company page');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows a company's devices as the API counts them, and says when its quota is below what it stores", async () => {
    const acme = await detailOf('acme');
    expect(acme.deviceCount).toBeGreaterThan(0);
    expect(acme.usedBytes).toBeGreaterThan(0);
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/companies/acme');
    await page.getByRole('heading', { level: 1, name: 'Company acme' }).waitFor();
    expect(await facts(page)).toEqual(factsOf(acme));

    // A quota of 0 MB is below what acme stores: accepted, and the page says uploads are now refused.
    const edit = page.getByRole('form', { name: 'Change the company' });
    await edit.getByLabel('Amount').fill('0');
    await edit.getByLabel('Unit').selectOption('MB');
    await edit.getByRole('button', { name: 'Save the changes' }).click();
    await edit.getByRole('status').filter({ hasText: 'uploads are refused until it is raised' }).waitFor();
    const over = await detailOf('acme');
    expect(over.overQuota).toBe(true);
    expect(await facts(page)).toEqual(factsOf(over));
    // And back to what it was, so that the other tests see acme as the demo made it.
    expectOk(
      await root().PATCH('/admin/companies/{companyId}', {
        params: { path: { companyId: 'acme' } },
        body: { quotaBytes: acme.quotaBytes },
      }),
    );

    // A refusal from the service is shown with its detail.
    await page.reload();
    await edit.getByLabel('Amount').fill('2');
    await edit.getByLabel('Unit').selectOption('TB');
    await edit.getByRole('button', { name: 'Save the changes' }).click();
    await page.getByRole('alert').filter({ hasText: 'quotaBytes' }).waitFor();
    expect((await detailOf('acme')).quotaBytes).toBe(acme.quotaBytes);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('offers an operator no administration, and shows the refusal of a pasted address', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/admin/companies');
    await page.getByRole('heading', { level: 1, name: 'Companies' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.getByRole('link', { name: 'Fleet' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Companies' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Create a company' }).count()).toBe(0);
    await page.getByRole('alert').filter({ hasText: 'companies:read' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

/** Every user of `company` (every user when undefined) as root lists them, following every page. */
async function allUsers(company?: string): Promise<User[]> {
  const found: User[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await root().GET('/admin/users', {
        params: { query: { ...(company === undefined ? {} : { company }), ...(cursor === undefined ? {} : { cursor }) } },
      }),
    );
    found.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

/** A user's row as the users table shows it. */
const userRowOf = (user: User) => [
  user.username,
  user.email,
  roleName(user.role),
  user.companies.join(', '),
  user.enabled ? 'Enabled' : `Disabled by ${user.disabledBy?.username} (${user.disabledBy?.role})`,
  user.status === 'FORCE_CHANGE_PASSWORD' ? 'Temporary: sets a new one at the next sign-in' : 'Set by the user',
  dateTime(user.createdAt),
];

/** The user as root reads them through the API. */
async function userOf(username: string): Promise<User> {
  return expectOk(await root().GET('/admin/users/{username}', { params: { path: { username } } }));
}

/** What the token endpoint answers a password sign-in: its status and, when refused, its `challenge`. */
async function tryPassword(username: string, password: string): Promise<{ status: number; challenge?: unknown }> {
  const answer = await clientFor(local.service).auth.POST('/token', { body: { username, password } });
  return { status: answer.response.status, challenge: (answer.error as { challenge?: unknown } | undefined)?.challenge };
}

/** The temporary password the page shows in the status region `region` (its `<code>`). */
async function shownPassword(region: ReturnType<Page['getByRole']>): Promise<string> {
  const code = region.locator('code');
  await code.waitFor();
  return (await code.textContent()) ?? '';
}

describe.skipIf(!hasChromium)('the console users administration', () => {
  it('lets root invite a user of a company, showing the temporary password once, and lists the users as the API does', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/users?company=acme');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();

    const form = page.getByRole('form', { name: 'Invite a user' });
    await form.getByLabel('Username').fill('carol');
    await form.getByLabel('Email').fill('carol@example.com');
    await form.getByLabel('Role').selectOption('operator');
    // The company the page shows is ticked already.
    expect(await form.getByRole('checkbox', { name: 'acme (Acme Retail)' }).isChecked()).toBe(true);
    expect(await form.getByRole('checkbox', { name: 'globex (Globex Transit)' }).isChecked()).toBe(false);
    await form.getByRole('button', { name: 'Invite the user' }).click();
    const status = form.getByRole('status');
    await status.filter({ hasText: 'User carol invited.' }).waitFor();
    expect(await status.textContent()).toContain('shown only this once');
    const temporary = await shownPassword(status);
    // The password shown is the one that signs carol in: the service answers with its new-password challenge.
    expect(await tryPassword('carol', temporary)).toEqual({ status: 401, challenge: 'new_password_required' });
    expect(await userOf('carol')).toMatchObject({
      username: 'carol',
      email: 'carol@example.com',
      role: 'operator',
      companies: ['acme'],
      enabled: true,
      status: 'FORCE_CHANGE_PASSWORD',
    });

    const expected = (await allUsers('acme')).map(userRowOf);
    expect(expected.map((row) => row[0])).toContain('carol');
    await expect.poll(() => tableRows(page, 'Users of acme')).toEqual(expected);
    await expectAccessible(page, 'users page');
    await screenshot(page, 'console-admin-users.png');

    // Shown once: a reload of the same address shows no password.
    await page.reload();
    await page.getByRole('table', { name: 'Users of acme', exact: true }).waitFor();
    expect(await page.getByText(temporary).count()).toBe(0);

    // Another company, then every company (a platform administrator may list every user).
    await page.getByRole('combobox', { name: /^Company\b/ }).selectOption('globex');
    await expect.poll(() => page.url()).toContain('#/admin/users?company=globex');
    await expect.poll(async () => tableRows(page, 'Users of globex')).toEqual((await allUsers('globex')).map(userRowOf));
    await page.getByRole('combobox', { name: /^Company\b/ }).selectOption('');
    await expect.poll(async () => tableRows(page, 'Every user')).toEqual((await allUsers()).map(userRowOf));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("changes a user's role, companies and sign-in, resets their password and deletes them after a confirmation", async () => {
    const invited = expectOk(
      await root().POST('/admin/users', { body: { username: 'erin', email: 'erin@example.com', role: 'viewer', companies: ['acme'] } }),
    );
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/users?company=acme');
    await page.getByRole('table', { name: 'Users of acme', exact: true }).getByRole('link', { name: 'erin' }).click();
    await page.getByRole('heading', { level: 1, name: 'User erin' }).waitFor();
    expect(page.url()).toContain('#/admin/users/erin?company=acme');

    const edit = page.getByRole('form', { name: 'Change the user' });
    await edit.getByLabel('Role').selectOption('operator');
    await edit.getByRole('checkbox', { name: 'globex (Globex Transit)' }).check();
    await edit.getByRole('checkbox', { name: /^May sign in/ }).uncheck();
    await edit.getByRole('button', { name: 'Save the changes' }).click();
    await edit.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
    const changed = await userOf('erin');
    expect(changed).toMatchObject({ role: 'operator', companies: ['acme', 'globex'], enabled: false });
    expect((await facts(page)).Role).toBe(roleName('operator'));
    // Who disabled them, and with which role: only a platform-admin enables a user a platform-admin disabled.
    expect((await facts(page))['Sign-in']).toBe('Disabled by root (platform-admin)');
    // Disabled: even the right password is refused like a wrong one.
    expect((await tryPassword('erin', invited.temporaryPassword ?? '')).status).toBe(401);
    expect((await tryPassword('erin', invited.temporaryPassword ?? '')).challenge).toBeUndefined();

    await page
      .getByRole('form', { name: 'Change the user' })
      .getByRole('checkbox', { name: /^May sign in/ })
      .check();
    await page.getByRole('form', { name: 'Change the user' }).getByRole('button', { name: 'Save the changes' }).click();
    await expect.poll(async () => (await userOf('erin')).enabled).toBe(true);

    await page.getByRole('button', { name: 'Reset the password of erin' }).click();
    const reset = page.getByRole('region', { name: 'Password' }).getByRole('status');
    await reset.filter({ hasText: 'Password of erin reset.' }).waitFor();
    const renewed = await shownPassword(reset);
    expect(renewed).not.toBe(invited.temporaryPassword);
    expect(await tryPassword('erin', renewed)).toEqual({ status: 401, challenge: 'new_password_required' });
    expect((await tryPassword('erin', invited.temporaryPassword ?? '')).challenge).toBeUndefined();

    await page.getByRole('button', { name: 'Delete erin…' }).click();
    const confirm = page.getByRole('region', { name: 'Delete erin?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await userOf('erin')).username).toBe('erin');
    await page.getByRole('button', { name: 'Delete erin…' }).click();
    await expectAccessible(page, 'user page, confirming the deletion');
    await page.getByRole('region', { name: 'Delete erin?' }).getByRole('button', { name: 'Delete erin' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    expect(page.url()).toContain('#/admin/users?company=acme');
    await page.getByRole('status').filter({ hasText: 'User erin deleted.' }).waitFor();
    expectError(await root().GET('/admin/users/{username}', { params: { path: { username: 'erin' } } }), 404);
    expect(await page.getByRole('table', { name: 'Users of acme', exact: true }).getByRole('link', { name: 'erin' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('offers a company administrator only their companies and the roles they may grant', async () => {
    const invited = expectOk(
      await root().POST('/admin/users', {
        body: { username: 'dana', email: 'dana@example.com', role: 'company-admin', companies: ['acme'] },
      }),
    );
    // Dana sets her own password through the token endpoint (the console's new-password step has its own test).
    const password = 'Dana-admin-2026!';
    const set = await clientFor(local.service).auth.POST('/token', {
      body: { username: 'dana', password: invited.temporaryPassword ?? '', new_password: password },
    });
    expect(set.response.status).toBe(200);

    const { page, errors } = await openConsole(browser, local.service, '#/admin/users');
    await signInWith(page, 'dana', password);
    // A company administrator names one of their companies: the page names her first.
    await expect.poll(() => page.url()).toContain('#/admin/users?company=acme');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.getByRole('link', { name: 'Users' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Companies' }).count()).toBe(0);
    const companySelect = page.getByRole('combobox', { name: /^Company\b/ });
    expect(await companySelect.locator('option').allTextContents()).toEqual(['acme']);
    const form = page.getByRole('form', { name: 'Invite a user' });
    expect(await form.getByRole('checkbox').evaluateAll((boxes: { value?: string }[]) => boxes.map((box) => box.value))).toEqual(['acme']);
    expect(
      await form
        .getByLabel('Role')
        .locator('option')
        .evaluateAll((options: { value?: string }[]) => options.map((o) => o.value)),
    ).toEqual(ROLES.filter((entry) => entry.role !== 'platform-admin').map((entry) => entry.role));
    // What her own token lists: the users whose companies are all hers (not olivia, of acme and globex).
    const danaToken = expectOk(await clientFor(local.service).auth.POST('/token', { body: { username: 'dana', password } })).access_token;
    const hers = expectOk(await clientFor(local.service, danaToken).main.GET('/admin/users', { params: { query: { company: 'acme' } } }));
    expect(hers.items.map((user) => user.username)).not.toContain('olivia');
    await expect.poll(async () => tableRows(page, 'Users of acme')).toEqual(hers.items.map(userRowOf));
    await expectAccessible(page, 'users page of a company administrator');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('offers an operator no users administration', async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/fleet');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    await nav.getByRole('link', { name: 'Fleet' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Users' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Audit' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

/** The audit entries matching `query` as root reads them, following every page. */
async function allEntries(query: { company?: string; actor?: string }): Promise<AuditEntry[]> {
  const found: AuditEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await root().GET('/admin/audit', { params: { query: { ...query, ...(cursor === undefined ? {} : { cursor }) } } }),
    );
    found.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

/** An entry's row as the audit table shows it. */
const entryRowOf = (entry: AuditEntry) => [
  dateTime(entry.at),
  entry.actor,
  (entry.action.charAt(0).toUpperCase() + entry.action.slice(1)).replace(/[.-]/g, ' '),
  `${entry.target.kind === 'company' ? 'Company' : 'User'} ${entry.target.id}`,
  changeLines(entry.before, entry.after).join(''),
];

describe.skipIf(!hasChromium)('the console audit page', () => {
  it('shows the administrative changes as the API lists them, filtered by company and actor', async () => {
    expectOk(await root().POST('/admin/companies', { body: { id: 'umbrella', name: 'Umbrella', quotaBytes: 1024 ** 2 } }));
    expectOk(
      await root().PATCH('/admin/companies/{companyId}', { params: { path: { companyId: 'umbrella' } }, body: { name: 'Umbrella Corp' } }),
    );
    expectOk(
      await root().POST('/admin/users', { body: { username: 'ivan', email: 'ivan@example.com', role: 'viewer', companies: ['umbrella'] } }),
    );
    const { page, errors } = await signedIn(browser, local.service, 'root', '#/admin/audit?company=umbrella');
    const nav = page.getByRole('navigation', { name: 'Pages' });
    expect(await nav.getByRole('link', { name: 'Audit' }).getAttribute('aria-current')).toBe('page');
    const caption = 'Administrative changes, newest first';
    const expected = (await allEntries({ company: 'umbrella' })).map(entryRowOf);
    expect(expected.map((row) => row[2])).toEqual(['User invited', 'Company updated', 'Company created']);
    expect(expected[1]?.[4]).toBe('name: Umbrella → Umbrella Corp');
    await expect.poll(() => tableRows(page, caption)).toEqual(expected);
    await expectAccessible(page, 'audit page');
    await screenshot(page, 'console-admin-audit.png');

    // Filtered by actor through the form: the URL holds the API's parameters.
    const filters = page.getByRole('form', { name: 'Which changes' });
    await filters.getByLabel('Company').selectOption('');
    await filters.getByLabel('Made by (username)').fill('root');
    await filters.getByRole('button', { name: 'Show the changes' }).click();
    await expect.poll(() => page.url()).toContain('#/admin/audit?actor=root');
    await expect.poll(async () => tableRows(page, caption)).toEqual((await allEntries({ actor: 'root' })).map(entryRowOf));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
