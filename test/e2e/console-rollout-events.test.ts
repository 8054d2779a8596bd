/**
 * End-to-end over `npm start`, in headless Chromium: the rollout page's event log. A rollout to demo kiosks (which
 * never report, so its wave keeps RUNNING) is paused through the API and resumed on the page: the log shows both, the
 * pause arriving by the page's polling, and every line matches the API's `events` (its time and its words). An
 * UNDEPLOY rollout, whose waves complete without reports, shows its waves completed with their counts. axe checks
 * the page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { describeRolloutEvent } from '../../client/rollout-events.js';
import { chromiumAvailable, launchChromium } from './browser.js';
import { expectAccessible, screenshot, signedIn } from './console-harness.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const hasChromium = chromiumAvailable();
if (!hasChromium) console.warn('Chromium not installed and could not be installed: skipping the console rollout event log tests');

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';

const local = useLocalService({ users: ['alice'], environment: { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' } });
const alice = () => clientFor(local.service, local.tokens.alice);

type Rollout = components['schemas']['Rollout'];

let browser: Browser;

/** The rollout as alice reads it through the API. */
async function getRollout(rolloutId: string): Promise<Rollout> {
  return expectOk(
    await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId } },
    }),
  );
}

/** Creates a rollout of the scenario's 1.1.0 to `ids` as alice; its id. */
async function createRollout(action: 'DEPLOY' | 'UNDEPLOY', ids: string[], waves: number[]): Promise<string> {
  const answer = await alice().main.POST('/companies/{companyId}/resources/rollouts', {
    params: { path: { companyId: COMPANY } },
    body: { action, what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' }, targets: { ids }, waves, waveTimeoutSeconds: 3600 },
  });
  expect(answer.response.status).toBe(202);
  return expectOk(answer).id;
}

/** The event log as the page shows it: each line's time (its `datetime`) and words. */
async function shownLog(page: Page): Promise<{ at: string | null; what: string }[]> {
  const log = page.getByRole('region', { name: 'Event log' }).getByRole('listitem');
  return log.evaluateAll(
    (items: { querySelector(selector: string): { textContent: string | null; getAttribute(name: string): string | null } | null }[]) =>
      items.map((item) => ({
        at: item.querySelector('time')?.getAttribute('datetime') ?? null,
        what: (item.querySelector('.event-what')?.textContent ?? '').trim(),
      })),
  );
}

/** The API's events of the rollout, as the page should show them. */
function expectedLog(rollout: Rollout): { at: string | null; what: string }[] {
  return rollout.events.map((event) => ({ at: event.at, what: describeRolloutEvent(event, { action: rollout.action }) }));
}

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)('the rollout event log', () => {
  it('shows a pause by polling and a resume made on the page, as the API records them', async () => {
    const rolloutId = await createRollout('DEPLOY', ['acme-kiosk-0005', 'acme-kiosk-0006'], [1]);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/rollouts/${COMPANY}/${rolloutId}`);
    const log = page.getByRole('region', { name: 'Event log' });
    await log.getByText('Wave 1 started').waitFor();
    expect(await log.getByText('Created by alice').count()).toBe(1);

    // Paused elsewhere (the API): the page's polling brings it into the log, without a reload.
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/pause', {
        params: { path: { companyId: COMPANY, rolloutId } },
      }),
    );
    await log.getByText('Paused by alice').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Resume rollout' }).click();
    await log.getByText('Resumed by alice').waitFor();

    const rollout = await getRollout(rolloutId);
    expect(rollout.events.map((event) => event.type)).toEqual(['CREATED', 'WAVE_STARTED', 'PAUSED', 'RESUMED']);
    expect(await shownLog(page)).toEqual(expectedLog(rollout));
    await expectAccessible(page, 'rollout page with its event log');
    await screenshot(page, 'console-rollout-events.png');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('shows the waves completed with their counts, and the completion', async () => {
    // UNDEPLOY waves complete once their chunks ran, without reports: the rollout runs to its end by itself.
    const rolloutId = await createRollout('UNDEPLOY', ['acme-kiosk-0007', 'acme-kiosk-0008'], [1]);
    await eventually(async () => (await getRollout(rolloutId)).state === 'COMPLETED', 'the UNDEPLOY rollout COMPLETED');
    const rollout = await getRollout(rolloutId);
    expect(rollout.events.map((event) => `${event.type} ${event.wave ?? ''}`.trim())).toEqual([
      'CREATED',
      'WAVE_STARTED 1',
      'WAVE_COMPLETED 1',
      'WAVE_STARTED 2',
      'WAVE_COMPLETED 2',
      'COMPLETED',
    ]);
    const { page, errors } = await signedIn(browser, local.service, 'alice', `#/rollouts/${COMPANY}/${rolloutId}`);
    const log = page.getByRole('region', { name: 'Event log' });
    await log.getByText('Completed', { exact: true }).waitFor();
    expect(await log.getByText(/^Wave 2 completed: 1 /).count()).toBe(1);
    expect(await shownLog(page)).toEqual(expectedLog(rollout));
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
