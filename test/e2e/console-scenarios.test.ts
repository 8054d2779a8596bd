/**
 * End-to-end over `npm start`, in headless Chromium: the console's scenarios page. What it shows (scenarios, versions,
 * storage) is checked against the API's answers for the same token; the skeleton it saves against the API's skeleton;
 * its uploads (direct up to 4 MiB, presigned above) against what the API then lists, and its refusals (every 422
 * violation, the 413 quota figures) against the API's problems for the same archives.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import JSZip from 'jszip';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { MAX_DIRECT_UPLOAD_BYTES } from '../../functions/contract/archives.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { MiB, validArchive } from './failure-paths.js';
import { clientFor, expectError, uploadArchive, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console scenarios tests');

const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });

/** A number as the page writes it (`4,194,304`). */
const grouped = (value: number) => value.toLocaleString('en-US');

/** The API's skeleton archive for `company` (typed client, as bytes). */
async function apiSkeleton(token: string, company: string, version?: string): Promise<Uint8Array> {
  const { data, response } = await clientFor(local.service, token).main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
    params: { path: { companyId: company }, query: version === undefined ? {} : { version } },
    parseAs: 'arrayBuffer',
  });
  expect(response.status).toBe(200);
  return new Uint8Array(data as ArrayBuffer);
}

/** The skeleton with scenario.json changed by `edit` (a valid archive unless `edit` breaks it). */
async function editedSkeleton(token: string, edit: (manifest: Record<string, unknown>) => void): Promise<Uint8Array> {
  const zip = await JSZip.loadAsync(await apiSkeleton(token, 'acme'));
  const manifest = JSON.parse(await (zip.file('scenario.json') as JSZip.JSZipObject).async('string')) as Record<string, unknown>;
  edit(manifest);
  zip.file('scenario.json', JSON.stringify(manifest, null, 2));
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

/** The text of every cell of a table's body, row by row. */
function rowsOf(page: Page, table: string): Promise<string[][]> {
  return page
    .getByRole('table', { name: table, exact: true })
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells, (cell) =>
          (cell.textContent ?? '').trim(),
        ),
      ),
    );
}

/** A versions table as the API's fields: version, upload time (the `<time>`'s datetime), size in bytes, uploader. */
function versionsOf(page: Page, scenarioId: string): Promise<{ version: string; created: string; size: string; uploadedBy: string }[]> {
  return page
    .getByRole('table', { name: `Versions of ${scenarioId}`, exact: true })
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => {
        const cells = (
          row as unknown as {
            cells: ArrayLike<{ textContent: string | null; querySelector(s: string): { getAttribute(n: string): string | null } | null }>;
          }
        ).cells;
        return {
          version: (cells[0]?.textContent ?? '').trim(),
          created: cells[1]?.querySelector('time')?.getAttribute('datetime') ?? '',
          size: cells[2]?.querySelector('span')?.getAttribute('title') ?? '',
          uploadedBy: (cells[3]?.textContent ?? '').trim(),
        };
      }),
    );
}

/** Expects the page's scenarios and versions tables to show exactly the API's listing of `company`. */
async function expectListingOfApi(page: Page, token: string, company: string): Promise<void> {
  const dss = clientFor(local.service, token);
  const listing = expectOk(await dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: company } } }));
  expect(listing.nextCursor).toBeNull();
  await expect
    .poll(async () => (await rowsOf(page, `Scenarios of ${company}`)).map((cells) => cells[0]), { timeout: 15_000 })
    .toEqual(listing.items.map((item) => item.id));
  const rows = await rowsOf(page, `Scenarios of ${company}`);
  for (const [index, item] of listing.items.entries()) {
    const cells = rows[index] ?? [];
    expect(cells[1]?.startsWith(item.name)).toBe(true);
    expect(cells.slice(2, 4)).toEqual([item.latestVersion, item.versions.join(', ')]);
    const detail = expectOk(
      await dss.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
        params: { path: { companyId: company, scenarioId: item.id } },
      }),
    );
    expect(await versionsOf(page, item.id)).toEqual(
      detail.versions.map((version) => ({
        version: version.version,
        created: version.created,
        size: `${grouped(version.size)} bytes`,
        uploadedBy: version.uploadedBy,
      })),
    );
  }
}

/** Expects the page's storage figures and meter to be the API's usage of `company`. */
async function expectUsageOfApi(page: Page, token: string, company: string): Promise<void> {
  const usage = expectOk(
    await clientFor(local.service, token).main.GET('/companies/{companyId}/resources/scenarios/usage', {
      params: { path: { companyId: company } },
    }),
  );
  const meter = page.getByRole('meter', { name: 'Storage used' });
  await expect.poll(() => meter.getAttribute('value'), { timeout: 15_000 }).toBe(String(usage.usedBytes));
  expect(await meter.getAttribute('max')).toBe(String(usage.quotaBytes));
  expect(await page.locator('.usage-figures').textContent()).toContain(`${grouped(usage.usedBytes)} of ${grouped(usage.quotaBytes)} bytes`);
}

/** Chooses `archive` in the file field and presses "Upload". */
async function upload(page: Page, archive: Uint8Array, name = 'scenario.zip'): Promise<void> {
  await page.getByLabel('Scenario archive (.zip)').setInputFiles({ name, mimeType: 'application/zip', buffer: Buffer.from(archive) });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
}

describe.skipIf(!hasChromium)('the console scenarios page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('makes the company explicit and shows the API listing, versions and usage; pages with "Show more"', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/scenarios');
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/scenarios?company=acme');
    await page.getByRole('heading', { level: 1, name: 'Scenarios of acme' }).waitFor();
    await expectListingOfApi(page, local.tokens.alice, 'acme');
    await expectUsageOfApi(page, local.tokens.alice, 'acme');
    await expectAccessible(page, 'scenarios page');

    // One scenario per page: "Show more" reads the next page with the API's cursor until the last. The demo data gives
    // acme one scenario; two more make three pages.
    for (const id of ['console-paging-a', 'console-paging-b']) {
      expect((await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive(id, '1.0.0'))).response.status).toBe(201);
    }
    const all = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/scenarios', {
        params: { path: { companyId: 'acme' } },
      }),
    ).items.map((item) => item.id);
    expect(all.length).toBeGreaterThanOrEqual(3);
    await page.evaluate("location.hash = '#/scenarios?company=acme&limit=1'");
    await expect.poll(async () => (await rowsOf(page, 'Scenarios of acme')).map((cells) => cells[0])).toEqual(all.slice(0, 1));
    for (let shown = 1; shown < all.length; shown += 1) {
      await page.getByRole('button', { name: 'Show more scenarios' }).click();
      await expect.poll(async () => (await rowsOf(page, 'Scenarios of acme')).map((cells) => cells[0])).toEqual(all.slice(0, shown + 1));
    }
    await expect.poll(() => page.getByRole('button', { name: 'Show more scenarios' }).count()).toBe(0);
    // The page size is in the URL: a reload shows the first page of one again.
    await page.reload();
    await expect.poll(async () => (await rowsOf(page, 'Scenarios of acme')).map((cells) => cells[0])).toEqual(all.slice(0, 1));
    expect(await page.getByRole('button', { name: 'Show more scenarios' }).count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('saves the skeleton: a ZIP with the same files as the API skeleton, under the name the service gives it', {
    timeout: 120_000,
  }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/scenarios?company=acme');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the skeleton' }).click(),
    ]);
    const saved = await readFile((await download.path()) as string);
    expect(saved.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    // Each skeleton gets a fresh scenario id (and JSZip stamps the time), so two downloads are never the same bytes:
    // they are compared file by file, scenario.json apart from its id.
    const ours = await JSZip.loadAsync(saved);
    const theirs = await JSZip.loadAsync(await apiSkeleton(local.tokens.alice, 'acme'));
    expect(Object.keys(ours.files).sort()).toEqual(Object.keys(theirs.files).sort());
    for (const name of Object.keys(theirs.files).filter((file) => !theirs.files[file]?.dir && file !== 'scenario.json')) {
      expect(await ours.file(name)?.async('nodebuffer'), name).toEqual(await theirs.file(name)?.async('nodebuffer'));
    }
    const manifest = JSON.parse(await (ours.file('scenario.json') as JSZip.JSZipObject).async('string')) as { id: string; version: string };
    const theirManifest = JSON.parse(await (theirs.file('scenario.json') as JSZip.JSZipObject).async('string')) as { id: string };
    expect({ ...manifest, id: theirManifest.id }).toEqual(theirManifest);
    expect(download.suggestedFilename()).toBe(`${manifest.id}-${manifest.version}.zip`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('uploads a new version directly: 201 shown, the version listed as the API lists it', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/scenarios?company=acme');
    const dss = clientFor(local.service, local.tokens.alice);
    const [existing] = expectOk(
      await dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' } } }),
    ).items;
    if (existing === undefined) throw new Error('the demo data has no acme scenario');
    await page.getByRole('table', { name: `Versions of ${existing.id}` }).waitFor();
    const archive = await editedSkeleton(local.tokens.alice, (manifest) => {
      manifest.id = existing.id;
      manifest.name = 'Uploaded from the console';
      manifest.version = '9.0.0';
    });
    await upload(page, archive, 'new-version.zip');
    await page
      .getByRole('status')
      .filter({ hasText: `Stored ${existing.id}@9.0.0` })
      .waitFor();
    const progress = page.getByRole('progressbar', {
      name: `Uploaded ${grouped(archive.byteLength)} of ${grouped(archive.byteLength)} bytes`,
    });
    expect(await progress.getAttribute('value')).toBe(String(archive.byteLength));

    const detail = expectOk(
      await dss.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
        params: { path: { companyId: 'acme', scenarioId: existing.id } },
      }),
    );
    expect(detail.versions.map((version) => version.version)).toContain('9.0.0');
    expect(detail.versions.find((version) => version.version === '9.0.0')?.size).toBe(archive.byteLength);
    await expect.poll(async () => (await versionsOf(page, existing.id)).map((version) => version.version)).toContain('9.0.0');
    await expectListingOfApi(page, local.tokens.alice, 'acme');
    await expectUsageOfApi(page, local.tokens.alice, 'acme');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists every violation of a refused archive with its path, as the API's 422 gives them", { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/scenarios?company=acme');
    // Two invalid fields of scenario.json: no name, a version that is not semantic.
    const archive = await editedSkeleton(local.tokens.alice, (manifest) => {
      delete manifest.name;
      manifest.version = '1.0';
    });
    const problem = expectError(await uploadArchive(local.service, local.tokens.alice, 'acme', archive), 422);
    expect(problem.errors?.map((error) => error.path).sort()).toEqual(['scenario.json#/name', 'scenario.json#/version']);

    await upload(page, archive, 'two-violations.zip');
    const refusal = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: 'The archive was refused' }) });
    await refusal.waitFor();
    const listed = await refusal.getByRole('listitem').allTextContents();
    expect(listed).toEqual((problem.errors ?? []).map((error) => `${error.path}: ${error.message}`));
    expect(await refusal.textContent()).toContain(problem.detail);
    await expectAccessible(page, 'scenarios page with the violations shown');
    await screenshot(page, 'console-scenarios.png');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the violation of a file that is not a ZIP as its message alone, with no empty path before it', {
    timeout: 120_000,
  }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'alice', '#/scenarios?company=acme');
    const notZip = new TextEncoder().encode('These are the release notes, not a scenario archive.\n');
    const problem = expectError(await uploadArchive(local.service, local.tokens.alice, 'acme', notZip), 422);
    const violation = problem.errors?.[0];
    expect(problem.errors?.length).toBe(1);
    expect(violation?.path).toBe('');

    await upload(page, notZip, 'release-notes.zip');
    const refusal = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: 'The archive was refused' }) });
    await refusal.waitFor();
    expect(await refusal.getByRole('listitem').allTextContents()).toEqual([violation?.message]);
    expect(await refusal.locator('code').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the quota figures of a 413: bob's second 3 MiB archive does not fit in globex's 5 MiB", { timeout: 120_000 }, async () => {
    const first = await uploadArchive(
      local.service,
      local.tokens.bob,
      'globex',
      await validArchive('console-quota', '1.0.0', { 'resources/assets/blob.bin': randomBytes(3 * MiB) }, true),
    );
    expect(first.response.status).toBe(201);
    const { page, errors } = await signedIn(browser, local.service, 'bob', '#/scenarios');
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/scenarios?company=globex');
    const second = await validArchive('console-quota', '2.0.0', { 'resources/assets/blob.bin': randomBytes(3 * MiB) }, true);
    const usage = expectOk(
      await clientFor(local.service, local.tokens.bob).main.GET('/companies/{companyId}/resources/scenarios/usage', {
        params: { path: { companyId: 'globex' } },
      }),
    );
    await upload(page, second, 'too-big-for-the-quota.zip');
    const refusal = page
      .getByRole('alert')
      .filter({ has: page.getByRole('heading', { name: 'The archive does not fit in the storage quota' }) });
    await refusal.waitFor();
    const text = (await refusal.textContent()) ?? '';
    expect(text).toContain(`${grouped(usage.quotaBytes)} bytes`);
    expect(text).toContain(`${grouped(usage.usedBytes)} bytes`);
    expect(text).toContain(`${grouped(second.byteLength)} bytes`);
    expect(text).toMatch(/quota/);
    // Nothing was charged: the page's usage is still the API's.
    await expectUsageOfApi(page, local.tokens.bob, 'globex');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('uploads an archive above the direct limit through a presigned slot, the progress reaching the total', {
    timeout: 180_000,
  }, async () => {
    const { page, errors, requested } = await signedIn(browser, local.service, 'alice', '#/scenarios?company=acme');
    const archive = await validArchive(
      'console-large',
      '1.0.0',
      { 'resources/assets/blob.bin': randomBytes(MAX_DIRECT_UPLOAD_BYTES + 256 * 1024) },
      true,
    );
    expect(archive.byteLength).toBeGreaterThan(MAX_DIRECT_UPLOAD_BYTES);
    await page.getByRole('heading', { level: 1, name: 'Scenarios of acme' }).waitFor();
    // The upload throttled to about 2 MiB/s, so that the bar is seen on its way (the transfer takes ~2 s).
    const devtools = await page.context().newCDPSession(page);
    await devtools.send('Network.enable');
    await devtools.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 2 * MiB,
    });
    await upload(page, archive, 'large.zip');
    const moving = page.getByRole('progressbar', { name: /^Uploaded [\d,]+ of / });
    await expect
      .poll(async () => Number((await moving.getAttribute('value').catch(() => null)) ?? 0), { timeout: 30_000, interval: 50 })
      .toBeGreaterThan(0);
    const midway = Number(await moving.getAttribute('value'));
    await devtools.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await page.getByRole('status').filter({ hasText: 'Stored console-large@1.0.0' }).waitFor({ timeout: 120_000 });
    expect(midway, 'the bar showed a part of the bytes before the whole').toBeLessThan(archive.byteLength);
    const progress = page.getByRole('progressbar', {
      name: `Uploaded ${grouped(archive.byteLength)} of ${grouped(archive.byteLength)} bytes`,
    });
    expect(await progress.getAttribute('value')).toBe(String(archive.byteLength));
    expect(await progress.getAttribute('max')).toBe(String(archive.byteLength));
    expect(requested).toContain(`${local.service.upload}/companies/acme/resources/scenarios/uploads`);
    expect(requested).not.toContain(`${local.service.upload}/companies/acme/resources/scenarios`);

    const detail = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
        params: { path: { companyId: 'acme', scenarioId: 'console-large' } },
      }),
    );
    expect(detail.versions.map((version) => [version.version, version.size])).toEqual([['1.0.0', archive.byteLength]]);
    await expect.poll(async () => (await versionsOf(page, 'console-large')).map((version) => version.version)).toEqual(['1.0.0']);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers olivia (read-only) the listing and the skeleton, but no upload', { timeout: 120_000 }, async () => {
    const { page, errors } = await signedIn(browser, local.service, 'olivia', '#/scenarios');
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/scenarios?company=acme');
    await expectListingOfApi(page, local.tokens.olivia, 'acme');
    await page.getByRole('button', { name: 'Download the skeleton' }).waitFor();
    expect(await page.getByLabel('Scenario archive (.zip)').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Upload', exact: true }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Upload a scenario version' }).count()).toBe(0);
    // Her other company, chosen in the header.
    await page.getByLabel('Company').selectOption('globex');
    await page.getByRole('heading', { level: 1, name: 'Scenarios of globex' }).waitFor();
    await expectListingOfApi(page, local.tokens.olivia, 'globex');
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/scenarios?company=globex');
    await expectAccessible(page, 'scenarios page, read-only');
    // Back returns to the company before.
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Scenarios of acme' }).waitFor();
    await expectListingOfApi(page, local.tokens.olivia, 'acme');
    expect(errors).toEqual([]);
    await page.close();
  });
});
