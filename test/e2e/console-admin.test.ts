/**
 * End-to-end over `npm start`, in headless Chromium: the console's administration pages. The demo's platform
 * administrator (root) creates a company through the companies page, finds it listed as the API lists it, opens it
 * (its figures as the API's detail gives them) and changes its name and quota; an operator (alice) is offered no
 * administration.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { bytes, count } from '../../console/src/format.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console administration tests');

const local = useLocalService({ users: ['root', 'alice'] });

const root = () => clientFor(local.service, local.tokens.root).main;

type AdminCompany = components['schemas']['AdminCompany'];

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
  const withUsers = detail as typeof detail & { userCount?: number };
  return {
    Id: detail.id,
    Name: detail.name,
    'Storage used': bytes(detail.usedBytes),
    Quota: bytes(detail.quotaBytes),
    'Over quota': detail.overQuota ? 'Over quota: every upload is refused until the quota is raised above the storage used.' : 'No',
    Devices: count(detail.deviceCount),
    ...(withUsers.userCount === undefined ? {} : { Users: count(withUsers.userCount) }),
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
    await form.getByLabel('Company id').fill('initech');
    await form.getByLabel('Name').fill('Initech');
    await form.getByLabel('Amount').fill('10');
    await form.getByLabel('Unit').selectOption('MB');
    await form.getByRole('button', { name: 'Create the company' }).click();
    await form.getByRole('status').filter({ hasText: 'Company initech created.' }).waitFor();
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
