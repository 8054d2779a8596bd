/**
 * End-to-end over `npm start`, in headless Chromium: the console's Integrations page. A company administrator of acme
 * (invited here by root: no demo user holds `webhooks:write`) adds a webhook through the page (its URL a receiver on
 * 127.0.0.1), sees its secret once, rotates the secret (the new one once, with when the previous stops signing),
 * disables and deletes it; sends a test event that the receiver gets and the page shows SUCCEEDED with its attempt,
 * then redelivers it (the receiver gets the same `webhook-id` again); a delivery to a closed loopback port shows its
 * attempt's error, retrying, and when the next attempt is due; alice, an operator, reads the webhooks without any
 * action. Each page is axe clean, and screenshots are saved.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, openConsole, screenshot, signedIn, signInWith } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console integrations tests');

const local = useLocalService({ users: ['root', 'alice'] });

/** The company administrator the test invites, and the password they choose. */
const ADMIN = 'carla';
const ADMIN_PASSWORD = 'Carla-chosen-pass-1!';

let browser: Browser;
let receiver: Server;
/** What the receiver got: each request's `webhook-id` header and body. */
const received: { id: string; body: string }[] = [];
let receiverUrl = '';
let adminToken = '';

/** The admin's typed client. */
const admin = () => clientFor(local.service, adminToken).main;

/** The webhooks of acme, as the API lists them to the admin. */
async function webhooks() {
  return expectOk(await admin().GET('/companies/{companyId}/webhooks', { params: { path: { companyId: 'acme' } } })).items;
}

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  // A receiver of deliveries, on the loopback address only, answering 204 to each.
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ id: String(request.headers['webhook-id'] ?? ''), body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/dss`;
  // Root invites a company administrator of acme, who sets their password.
  const root = clientFor(local.service, local.tokens.root);
  const invited = expectOk(
    await root.main.POST('/admin/users', {
      body: { username: ADMIN, email: 'carla@acme.example', role: 'company-admin', companies: ['acme'] },
    }),
  );
  const auth = clientFor(local.service).auth;
  const signed = expectOk(
    await auth.POST('/token', { body: { username: ADMIN, password: invited.temporaryPassword as string, new_password: ADMIN_PASSWORD } }),
  );
  adminToken = signed.access_token;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe.skipIf(!hasChromium)('the console Integrations page', () => {
  it('adds a webhook, shows its secret once, rotates the secret, disables and deletes it', { timeout: 120_000 }, async () => {
    const { page, errors } = await openConsole(browser, local.service, '#/integrations');
    await signInWith(page, ADMIN, ADMIN_PASSWORD);
    await page.getByRole('heading', { level: 1, name: 'Integrations' }).waitFor();
    expect(page.url()).toContain('#/integrations?company=acme');
    expect(await page.getByRole('link', { name: 'Integrations' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No webhook yet.').waitFor();

    // A webhook with no event is refused by the page, naming what to do.
    const form = page.getByRole('form', { name: 'Add webhook' });
    await form.getByLabel('URL').fill(receiverUrl);
    await form.getByRole('button', { name: 'Add webhook' }).click();
    await form.getByRole('alert').filter({ hasText: 'Choose at least one event' }).waitFor();

    const events = form.getByRole('group', { name: 'Events' });
    expect(await events.getByRole('checkbox').count()).toBe(12);
    await events.getByRole('checkbox', { name: /deployment\.failed/ }).check();
    await events.getByRole('checkbox', { name: /webhook\.test/ }).check();
    await form.getByLabel('Description (optional)').fill('Ops pager');
    await expectAccessible(page, 'the Integrations page with the filled form');
    await form.getByRole('button', { name: 'Add webhook' }).click();

    // The secret, once, with the words that say so; the API never shows it again.
    const secretField = form.getByLabel('Signing secret', { exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    await form.getByText('This secret is not shown again.').waitFor();
    await form.getByRole('button', { name: 'Copy secret' }).waitFor();
    const [created] = await webhooks();
    expect(created).toMatchObject({
      url: receiverUrl,
      events: ['deployment.failed', 'webhook.test'],
      description: 'Ops pager',
      enabled: true,
    });
    expect(JSON.stringify(created)).not.toContain(secret);
    await screenshot(page, 'console-integrations-created.png');
    // A reload forgets it: it was in the page's state only.
    await page.reload();
    await page.getByRole('table', { name: 'Webhooks of acme' }).waitFor();
    expect(await page.getByLabel('Signing secret', { exact: true }).count()).toBe(0);

    // The list shows it; its link opens it (the URL says which).
    await page.getByRole('table', { name: 'Webhooks of acme' }).getByRole('link', { name: receiverUrl }).click();
    const panel = page.getByRole('region', { name: `Webhook to ${receiverUrl}` });
    await panel.waitFor();
    expect(page.url()).toContain(`webhook=${created?.id}`);
    await panel.getByText('Nothing was delivered to this webhook yet.').waitFor();

    // Rotate: Cancel changes nothing and gives the focus back to its button; confirmed, the new secret shows once
    // with until when the previous one signs.
    await panel.getByRole('button', { name: 'Rotate secret' }).click();
    await panel.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Rotate secret');
    expect(await panel.getByRole('button', { name: 'Rotate the secret' }).count()).toBe(0);
    await panel.getByRole('button', { name: 'Rotate secret' }).click();
    await panel.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotated = await panel.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await panel.getByText(/The previous secret keeps signing beside it until/).waitFor();
    const afterRotation = expectOk(
      await admin().GET('/companies/{companyId}/webhooks/{webhookId}', {
        params: { path: { companyId: 'acme', webhookId: created?.id as string } },
      }),
    );
    expect(afterRotation.previousSecretExpiresAt).not.toBeNull();
    await panel.getByText('Previous secret', { exact: true }).waitFor();

    // Disable, then delete (confirmed): the list is empty again.
    await panel.getByRole('button', { name: 'Disable' }).click();
    await panel.getByText('The webhook is disabled.').waitFor();
    expect((await webhooks())[0]?.enabled).toBe(false);
    await panel.getByRole('button', { name: 'Delete webhook' }).click();
    await panel.getByRole('button', { name: 'Delete the webhook' }).click();
    await page.getByText(`The webhook to ${receiverUrl} is deleted.`).waitFor();
    await page.getByText('No webhook yet.').waitFor();
    expect(page.url()).not.toContain('webhook=');
    expect(await webhooks()).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('sends a test event that the receiver gets, shows its delivery and attempt, and redelivers it with the same webhook-id', {
    timeout: 120_000,
  }, async () => {
    const made = expectOk(
      await admin().POST('/companies/{companyId}/webhooks', {
        params: { path: { companyId: 'acme' } },
        body: { url: receiverUrl, events: ['webhook.test'], description: 'Test receiver' },
      }),
    );
    const { page, errors } = await openConsole(browser, local.service, `#/integrations?company=acme&webhook=${made.id}`);
    await signInWith(page, ADMIN, ADMIN_PASSWORD);
    const panel = page.getByRole('region', { name: `Webhook to ${receiverUrl}` });
    await panel.getByRole('button', { name: 'Send test event' }).click();
    await panel.getByText('A webhook.test event is on its way').waitFor();
    const tests = () => received.filter((entry) => entry.body.includes('"webhook.test"'));
    await eventually(async () => tests().length === 1, 'the receiver got the test event', 30_000);

    // Its delivery shows SUCCEEDED without a reload, its attempt in a <details>.
    const deliveries = panel.getByRole('table', { name: 'Deliveries, newest first' });
    await deliveries.getByRole('cell', { name: 'Succeeded' }).waitFor({ timeout: 30_000 });
    expect(await deliveries.getByRole('cell', { name: 'webhook.test', exact: true }).count()).toBe(1);
    await deliveries.getByText('1 attempt', { exact: true }).click();
    await deliveries.getByText(/: 204 in [\d,]+ ms/).waitFor();
    const listed = async () =>
      expectOk(
        await admin().GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', {
          params: { path: { companyId: 'acme', webhookId: made.id } },
        }),
      ).items;
    const [delivery] = await listed();
    expect(delivery).toMatchObject({ type: 'webhook.test', state: 'SUCCEEDED', attempts: 1, lastStatus: 204 });
    expect(tests()[0]?.id).toBe(delivery?.messageId);
    // The list's last deliveries follow, without a reload.
    await page
      .getByRole('table', { name: 'Webhooks of acme' })
      .getByRole('cell', { name: 'Succeeded', exact: true })
      .waitFor({ timeout: 15_000 });
    await expectAccessible(page, 'a webhook with its deliveries');
    await screenshot(page, 'console-integrations.png');

    // Redeliver: the receiver gets the same webhook-id again, and the page shows the second attempt.
    await deliveries.getByRole('button', { name: /^Redeliver/ }).click();
    await panel.getByText('The webhook.test delivery is sent again.').waitFor();
    await eventually(async () => tests().length === 2, 'the redelivery', 30_000);
    expect(tests()[1]?.id).toBe(delivery?.messageId);
    await deliveries.getByText('2 attempts', { exact: true }).waitFor({ timeout: 30_000 });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a failed attempt's error, its delivery retrying and when the next attempt is due", { timeout: 120_000 }, async () => {
    // A loopback port nothing listens on (bound, then closed): each attempt is refused by the receiver's host.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}/down`;
    const made = expectOk(
      await admin().POST('/companies/{companyId}/webhooks', {
        params: { path: { companyId: 'acme' } },
        body: { url, events: ['webhook.test'] },
      }),
    );
    const path = { companyId: 'acme', webhookId: made.id };
    expectOk(await admin().POST('/companies/{companyId}/webhooks/{webhookId}/test', { params: { path } }));
    const listDeliveries = async () =>
      expectOk(await admin().GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', { params: { path } })).items;
    let failed: Awaited<ReturnType<typeof listDeliveries>>[number] | undefined;
    await eventually(
      async () => {
        failed = (await listDeliveries())[0];
        return (failed?.attempts ?? 0) >= 1;
      },
      'the first attempt',
      30_000,
    );
    const { page, errors } = await openConsole(browser, local.service, `#/integrations?company=acme&webhook=${made.id}`);
    await signInWith(page, ADMIN, ADMIN_PASSWORD);
    const deliveries = page.getByRole('table', { name: 'Deliveries, newest first' });
    await deliveries.getByRole('cell', { name: /^Pending: retrying|^Failed/ }).waitFor();
    await deliveries.getByText(/^\d+ attempts?$/).click();
    await deliveries.getByText(`${failed?.history[0]?.error}`, { exact: false }).first().waitFor();
    expect(failed?.history[0]?.status).toBeNull();
    await deliveries.getByRole('cell', { name: 'No answer' }).waitFor();
    // Retrying: the next attempt's time is shown where a final delivery shows a dash.
    expect(failed?.state).toBe('PENDING');
    const nextAttempt = await deliveries.locator('tbody tr').first().locator('td').nth(5).textContent();
    expect(nextAttempt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    await expectAccessible(page, 'a failing delivery');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows an operator the webhooks without any action, and a pasted webhook address its page', { timeout: 120_000 }, async () => {
    const made = expectOk(
      await admin().POST('/companies/{companyId}/webhooks', {
        params: { path: { companyId: 'acme' } },
        body: { url: `${receiverUrl}/paused`, events: ['rollout.paused'] },
      }),
    );
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/integrations?company=acme&webhook=${made.id}`);
    await page.getByRole('heading', { level: 2, name: `Webhook to ${receiverUrl}/paused` }).waitFor();
    await page.getByText('Nothing was delivered to this webhook yet.').waitFor();
    expect(await page.getByRole('form', { name: 'Add webhook' }).count()).toBe(0);
    for (const name of ['Send test event', 'Rotate secret', 'Disable', 'Delete webhook', 'Redeliver'])
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    await page.getByRole('table', { name: 'Webhooks of acme' }).getByRole('cell', { name: 'rollout.paused' }).waitFor();
    await expectAccessible(page, 'the Integrations page of an operator');
    expect(errors).toEqual([]);
    await page.close();
  });
});
