/**
 * Deployments at fleet scale over HTTP against the local runtime: dry run, the 5,000-entry limit, Idempotency-Key
 * replay, DeploymentChanged events, and 50-way races on DynamoDB Local.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { call, clientFor, eventually, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob'] });

const entry = (device: string, version: string, action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY', scenario = 'acme-welcome') => ({
  target: { type: 'DEVICE', id: device, subId: null },
  what: { type: 'SCENARIO', id: scenario, subId: version },
  action,
});
/** POSTs a deployment request through the typed client, with `?dryRun` and an `Idempotency-Key` when given. */
const deploy = (
  token: string,
  company: string,
  body: components['schemas']['DeploymentRequestBody'],
  options: { dryRun?: boolean; key?: string } = {},
) =>
  clientFor(local.service, token).main.POST('/companies/{companyId}/resources/deployments', {
    params: {
      path: { companyId: company },
      query: options.dryRun === undefined ? {} : { dryRun: options.dryRun },
      header: options.key === undefined ? {} : { 'Idempotency-Key': options.key },
    },
    body,
  });
/**
 * `deploy` as a client that honours the service's admission control: a 503 (nothing processed) is sent again after
 * its `Retry-After`, at most 10 times. A burst of 50 on a busy machine may find the local address's queue standing.
 */
async function deployHonouringRetryAfter(token: string, company: string, body: components['schemas']['DeploymentRequestBody']) {
  for (let attempt = 1; ; attempt += 1) {
    const result = await deploy(token, company, body);
    if (result.response.status !== 503 || attempt === 10) return result;
    const seconds = Number(result.response.headers.get('retry-after') ?? '1');
    await new Promise((done) => setTimeout(done, Math.max(1, seconds) * 1000));
  }
}
const active = async (device: string) =>
  expectOk(
    await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: 'acme', deviceId: device } },
    }),
  ).items.map((item) => item.what.subId);

describe('dry run', () => {
  it('answers what would happen, replaying duplicates in order, and writes nothing', async () => {
    const body = {
      requests: [
        entry('acme-kiosk-0101', '1.0.0'),
        entry('acme-kiosk-0101', '1.0.0'),
        entry('acme-kiosk-0101', '1.0.0', 'UNDEPLOY'),
        entry('acme-kiosk-0999', '1.0.0'),
      ],
    };
    const dry = expectOk(await deploy(local.tokens.alice, 'acme', body, { dryRun: true }));
    expect(dry.dryRun).toBe(true);
    expect(dry.items.map((item) => item.cause)).toEqual([null, 'ALREADY_DEPLOYED', null, 'TARGET_NOT_FOUND']);
    expect(await active('acme-kiosk-0101')).toEqual([]);

    const real = expectOk(await deploy(local.tokens.alice, 'acme', body));
    expect(real.dryRun).toBe(false);
    expect(real.items.map((item) => item.cause)).toEqual([null, 'ALREADY_DEPLOYED', null, 'TARGET_NOT_FOUND']);
    expect(await active('acme-kiosk-0101')).toEqual([]);

    expectOk(await deploy(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0101', '1.1.0')] }));
    const again = expectOk(await deploy(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0101', '1.1.0')] }, { dryRun: true }));
    expect(again.items[0]).toMatchObject({ state: 'FAILURE', cause: 'ALREADY_DEPLOYED' });
    // Hand-built: a dryRun that is not a boolean, which the typed client does not send.
    const bad = await call(`${local.service.api}/companies/acme/resources/deployments?dryRun=yes`, {
      token: local.tokens.alice,
      json: body,
    });
    expect(bad.status).toBe(400);
  });
});

describe('limits', () => {
  it('refuses more than 5,000 entries with 413 naming the limit, and changes nothing', async () => {
    const requests = Array.from({ length: 5_001 }, (_, index) =>
      entry(`acme-kiosk-${String((index % 120) + 1).padStart(4, '0')}`, '1.0.0'),
    );
    const response = await deploy(local.tokens.alice, 'acme', { requests });
    expect(response.response.status).toBe(413);
    expect(response.response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.error?.detail).toContain('5000');
    expect(await active('acme-kiosk-0001')).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  it('returns the first response to a retry without executing again', async () => {
    const body = { note: 'idempotent', requests: [entry('acme-kiosk-0102', '1.0.0'), entry('acme-kiosk-0103', '1.0.0')] };
    const first = await deploy(local.tokens.alice, 'acme', body, { key: 'retry-1' });
    expect(first.response.status).toBe(200);
    expect(expectOk(first).items.map((item) => item.state)).toEqual(['SUCCESS', 'SUCCESS']);
    const retry = await deploy(local.tokens.alice, 'acme', body, { key: 'retry-1' });
    expect(retry.response.status).toBe(200);
    expect(retry.data).toEqual(first.data);
    expect(retry.response.headers.get('idempotent-replayed')).toBe('true');
    // Without the key the same body executes again (and finds the deployments active).
    const fresh = expectOk(await deploy(local.tokens.alice, 'acme', body));
    expect(fresh.items.map((item) => item.cause)).toEqual(['ALREADY_DEPLOYED', 'ALREADY_DEPLOYED']);
  });

  it('refuses the same key with a different body (422), and scopes keys per company', async () => {
    expectOk(await deploy(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0104', '1.0.0')] }, { key: 'retry-2' }));
    const different = await deploy(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0105', '1.0.0')] }, { key: 'retry-2' });
    expect(different.response.status).toBe(422);
    expect(different.response.headers.get('content-type')).toBe('application/problem+json');
    expect(different.error).toMatchObject({ status: 422 });
    expect(await active('acme-kiosk-0105')).toEqual([]);
    const otherCompany = await deploy(
      local.tokens.bob,
      'globex',
      { requests: [entry('globex-kiosk-0001', '1.0.0', 'DEPLOY', 'globex-timetable')] },
      { key: 'retry-2' },
    );
    expect(otherCompany.response.status).toBe(200);
    expect(expectOk(otherCompany).items[0]).toMatchObject({ state: 'SUCCESS' });
  });
});

describe('events', () => {
  it('emits one DeploymentChanged event per SUCCESS, none for failures or dry runs', async () => {
    const response = expectOk(
      await deploy(local.tokens.alice, 'acme', {
        note: 'events',
        requests: [entry('acme-kiosk-0106', '1.0.0'), entry('acme-kiosk-0106', '1.0.0'), entry('acme-kiosk-0107', '1.0.0')],
      }),
    );
    const [first, duplicate, second] = response.items;
    expectOk(await deploy(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0108', '1.0.0')] }, { dryRun: true }));
    // Events are derived from the deployments table's stream, a moment after the answer, and in no order across
    // devices (a company's deployments are spread over several partitions, each its own stream shard).
    const read = async () =>
      (await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line))
        // The bus carries other events too (the demo fleet's connection changes among them).
        .filter((event: { type: string }) => event.type === 'DeploymentChanged');
    await eventually(async () => {
      const ids = (await read()).map((event: { deploymentId: string }) => event.deploymentId);
      return ids.includes(first!.id) && ids.includes(second!.id);
    }, 'the events of both deployments');
    const lines = await read();
    const ids = lines.map((event: { deploymentId: string }) => event.deploymentId);
    expect(ids).toContain(first!.id);
    expect(ids).toContain(second!.id);
    expect(ids).not.toContain(duplicate!.id);
    expect(new Set(ids).size, 'each change once').toBe(ids.length);
    expect(lines.find((event: { deploymentId: string }) => event.deploymentId === first!.id)).toMatchObject({
      type: 'DeploymentChanged',
      company: 'acme',
      action: 'DEPLOY',
      deviceId: 'acme-kiosk-0106',
      scenarioId: 'acme-welcome',
      version: '1.0.0',
      by: 'alice',
      note: 'events',
    });
    expect(lines.some((event: { deviceId: string }) => event.deviceId === 'acme-kiosk-0108')).toBe(false);
  });
});

describe('races on DynamoDB Local', () => {
  it('50 concurrent identical DEPLOYs: exactly one SUCCESS; 50 UNDEPLOYs: exactly one SUCCESS', async () => {
    const run = (action: 'DEPLOY' | 'UNDEPLOY') =>
      Promise.all(
        Array.from({ length: 50 }, () =>
          deployHonouringRetryAfter(local.tokens.alice, 'acme', { requests: [entry('acme-kiosk-0110', '1.1.0', action)] }),
        ),
      );
    const deploys = (await run('DEPLOY')).map((response) => expectOk(response).items[0]?.cause);
    expect(deploys.filter((cause) => cause === null)).toHaveLength(1);
    expect(deploys.filter((cause) => cause === 'ALREADY_DEPLOYED')).toHaveLength(49);
    const undeploys = (await run('UNDEPLOY')).map((response) => expectOk(response).items[0]?.cause);
    expect(undeploys.filter((cause) => cause === null)).toHaveLength(1);
    expect(undeploys.filter((cause) => cause === 'ALREADY_UNDEPLOYED')).toHaveLength(49);
  });
});
