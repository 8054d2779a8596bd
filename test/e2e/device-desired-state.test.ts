/**
 * A device pulls its desired state and reports on it, over the local runtime: what an operator deploys to a device
 * appears in that device's `GET /device/deployments` (and nowhere else), the ETag lets it poll for free (304), the
 * archive it downloads is the one whose SHA-256 it was given, and what it reports shows on the operator's listings
 * and in the history.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const KIOSK = 'acme-kiosk-0001';
const OTHER = 'acme-kiosk-0002';
const SCENARIO = 'acme-welcome';

const local = useLocalService({ users: ['alice'], ownDynamoDbPort: true });
let kiosk: string;
let other: string;

const what = (version: string) => ({ type: 'SCENARIO' as const, id: SCENARIO, subId: version });

/** The typed client as the holder of `token` (a user's or a device's); answers are checked against the document. */
const as = (token: string) => clientFor(local.service, token);

async function deployments(action: 'DEPLOY' | 'UNDEPLOY', deviceId: string, version: string): Promise<void> {
  const response = expectOk(
    await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: 'acme' } },
      body: { requests: [{ target: { type: 'DEVICE', id: deviceId, subId: null }, what: what(version), action }] },
    }),
  );
  expect(response.items.map((item) => item.state)).toEqual(['SUCCESS']);
}

/** The device's desired state (`GET /device/deployments`), conditional when `ifNoneMatch` is given. */
const pull = (token: string, ifNoneMatch?: string) =>
  as(token).main.GET('/device/deployments', { params: { header: ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch } } });

const report = (token: string, version: string, state: 'DOWNLOADING' | 'INSTALLING' | 'INSTALLED' | 'FAILED', message?: string) =>
  as(token).main.POST('/device/deployments/status', {
    body: { what: what(version), state, ...(message === undefined ? {} : { message }) },
  });

const deviceListing = async (deviceId: string) =>
  expectOk(
    await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: 'acme', deviceId } },
    }),
  );

beforeAll(async () => {
  const issuer = {
    dataDirectory: local.settings.dataDirectory,
    dynamoDbEndpoint: local.dynamoDbEndpoint,
    auth: local.service.auth,
  };
  [{ token: kiosk }, { token: other }] = await Promise.all([deviceToken(issuer, 'acme', KIOSK), deviceToken(issuer, 'acme', OTHER)]);
  await deployments('DEPLOY', KIOSK, '1.0.0');
  await deployments('DEPLOY', OTHER, '1.1.0');
}, 180_000);

describe('the desired state of a device', () => {
  let etag: string;

  it('lists what is deployed on the device, with an ETag, and answers 304 with no body while it is unchanged', async () => {
    const first = await pull(kiosk);
    expect(first.response.status).toBe(200);
    etag = first.response.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.response.headers.get('cache-control')).toBe('private, no-cache');
    const state = expectOk(first);
    expect(state.items).toEqual([
      {
        what: what('1.0.0'),
        name: expect.any(String),
        size: expect.any(Number),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        downloadUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:/),
        downloadUrlExpiresAt: expect.any(String),
        deployedAt: expect.any(String),
      },
    ]);
    const expiresIn = Date.parse(state.items[0]?.downloadUrlExpiresAt ?? '') - Date.now();
    expect(expiresIn).toBeGreaterThan(3_500_000);
    expect(expiresIn).toBeLessThanOrEqual(3_600_000);

    for (const ifNoneMatch of [etag, `W/${etag}`, `"stale", ${etag}`, '*']) {
      const again = await pull(kiosk, ifNoneMatch);
      expect(again.response.status, ifNoneMatch).toBe(304);
      expect(again.data).toBeUndefined();
      expect(await again.response.text()).toBe('');
      expect(again.response.headers.get('etag')).toBe(etag);
    }
    expect((await pull(kiosk, '"stale"')).response.status).toBe(200);
  });

  it('gives a download of the very archive it describes', async () => {
    const [item] = expectOk(await pull(kiosk)).items;
    // The download URL is a presigned S3 URL, outside the document: fetched as a device fetches it.
    const download = await fetch(item?.downloadUrl as string);
    expect(download.status).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(bytes.length).toBe(item?.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(item?.sha256);
  });

  it("takes the device's status report, shows it on the listings, and keeps it in the history and the events", async () => {
    const accepted = await report(kiosk, '1.0.0', 'INSTALLED', 'running');
    expect(accepted.response.status).toBe(204);
    expect(await accepted.response.text()).toBe('');

    // A status is no change of what the device should run: the tag stays.
    expect((await pull(kiosk, etag)).response.status).toBe(304);
    const pulled = expectOk(await pull(kiosk)).items[0];
    expect(pulled?.status).toEqual({ state: 'INSTALLED', message: 'running', updated: expect.any(String) });

    const listed = (await deviceListing(KIOSK)).items[0];
    expect(listed?.deviceStatus).toEqual(pulled?.status);
    const all = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
        params: { path: { companyId: 'acme' } },
      }),
    );
    const byDevice = Object.fromEntries(all.items.map((item) => [item.target.id, item]));
    expect(byDevice[KIOSK]?.deviceStatus).toEqual(pulled?.status);
    expect(byDevice[OTHER]).not.toHaveProperty('deviceStatus');

    let entries: { kind: string }[] = [];
    await eventually(async () => {
      entries = expectOk(
        await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/deployments/history', {
          params: { path: { companyId: 'acme' }, query: { deviceId: KIOSK, scenarioId: SCENARIO, version: '1.0.0' } },
        }),
      ).items;
      return entries.some((entry) => entry.kind === 'DEVICE_STATUS');
    }, 'the status entry in the history');
    expect(entries[0]).toEqual({
      kind: 'DEVICE_STATUS',
      id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      target: { type: 'DEVICE', id: KIOSK, subId: null },
      what: what('1.0.0'),
      deploymentId: listed?.id,
      deviceStatus: { state: 'INSTALLED', message: 'running' },
      at: pulled?.status?.updated,
      by: `acme~${KIOSK}`,
    });
    expect(entries.map((entry) => entry.kind)).toEqual(['DEVICE_STATUS', 'ACTION']);

    await eventually(async () => {
      // The events file appears with the first event; until then there is nothing to read.
      const text = await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => '');
      return text.includes('"DeploymentStatusChanged"');
    }, 'the DeploymentStatusChanged event');
    const events = (await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'DeploymentStatusChanged');
    expect(events).toEqual([
      {
        type: 'DeploymentStatusChanged',
        company: 'acme',
        statusId: (entries[0] as { id?: string }).id,
        deploymentId: listed?.id,
        deviceId: KIOSK,
        scenarioId: SCENARIO,
        version: '1.0.0',
        state: 'INSTALLED',
        message: 'running',
        at: pulled?.status?.updated,
        by: `acme~${KIOSK}`,
      },
    ]);
  });

  it('refuses a report on a version that is not active on the device (404), even when it is active on another one', async () => {
    const elsewhere = await report(kiosk, '1.1.0', 'INSTALLED');
    expect(elsewhere.response.status).toBe(404);
    expect(elsewhere.response.headers.get('content-type')).toBe('application/problem+json');
    expect((await report(kiosk, '9.9.9', 'FAILED')).response.status).toBe(404);
    // The other device's deployment got nothing.
    expect((await deviceListing(OTHER)).items[0]).not.toHaveProperty('deviceStatus');
  });

  it('shows each device its own deployments only, and refuses user tokens', async () => {
    const theirs = await pull(other);
    expect(expectOk(theirs).items.map((item) => item.what.subId)).toEqual(['1.1.0']);
    expect(theirs.response.headers.get('etag')).not.toBe(etag);
    expect((await pull(local.tokens.alice)).response.status).toBe(403);
    expect((await report(local.tokens.alice, '1.0.0', 'INSTALLED')).response.status).toBe(403);
  });

  it('changes the ETag once the deployment is undeployed, and then takes no report on it', async () => {
    await deployments('UNDEPLOY', KIOSK, '1.0.0');
    // A poll is compared with the tag the deployments' change stream keeps on the device: the undeploy shows within
    // moments, not necessarily at once.
    let after = await pull(kiosk, etag);
    await eventually(async () => {
      after = await pull(kiosk, etag);
      return after.response.status === 200;
    }, 'a poll with the old ETag to get the new desired state');
    expect(after.response.headers.get('etag')).not.toBe(etag);
    expect(expectOk(after).items).toEqual([]);
    expect((await report(kiosk, '1.0.0', 'INSTALLED')).response.status).toBe(404);
  });
});
