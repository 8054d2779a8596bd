/**
 * The README walkthrough over real HTTP against `bin/local.ts` with embedded backends: token, skeleton, edit,
 * upload, deploy, list, filters, search, and a restart that keeps everything.
 */
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  uploadArchive,
} from './harness.js';
import { expectDocumented } from './contract.js';

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let bob: string;
let olivia: string;
let uploadedScenarioId: string;

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings);
  [alice, bob, olivia] = await Promise.all([tokenFor(service, 'alice'), tokenFor(service, 'bob'), tokenFor(service, 'olivia')]);
});

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
});

describe('README walkthrough', () => {
  it('issues a bearer token from the authentication service', async () => {
    const response = await call(`${service.auth}/token`, { json: { username: 'alice', password: 'alice-demo-password' } });
    expect(response.status).toBe(200);
    await expectDocumented('AuthToken', response);
    expect(response.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(response.body.access_token.split('.')).toHaveLength(3);
    const jwks = await call(`${service.auth}/.well-known/jwks.json`);
    await expectDocumented('AuthJwks', jwks);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(jwks.body.keys[0].d).toBeUndefined();
  });

  it('downloads a skeleton, edits it and uploads it (201), then refuses the same version (409)', async () => {
    const download = await fetch(`${service.api}/companies/acme/resources/scenarios/skeleton.zip?version=1.0.0`, {
      headers: { authorization: `Bearer ${alice}`, accept: 'application/zip' },
    });
    expect(download.status).toBe(200);
    await expectDocumented('ScenarioSkeleton', download);
    expect(download.headers.get('content-type')).toBe('application/zip');
    const zip = await JSZip.loadAsync(await download.arrayBuffer());
    expect(zip.file('scenario.json')).not.toBeNull();
    expect(Object.keys(zip.files).some((name) => name.startsWith('resources/'))).toBe(true);
    const manifest = JSON.parse(await zip.file('scenario.json')!.async('string'));
    expect(manifest.version).toBe('1.0.0');

    manifest.name = 'Lobby loop';
    manifest.version = '1.0.1';
    zip.file('scenario.json', JSON.stringify(manifest));
    const edited = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });

    const created = await uploadArchive(service, alice, 'acme', edited, 'lobby-loop.zip');
    expect(created.status).toBe(201);
    await expectDocumented('ScenarioUpload', created);
    expect(created.body).toMatchObject({ id: manifest.id, version: '1.0.1', name: 'Lobby loop', size: edited.byteLength });
    expect(created.body.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(created.body.created))).toBe(false);
    expect(created.headers.get('location')).toBe(`/companies/acme/resources/scenarios/${manifest.id}/versions/1.0.1`);
    uploadedScenarioId = manifest.id;

    const again = await uploadArchive(service, alice, 'acme', edited);
    expect(again.status).toBe(409);
    await expectDocumented('ScenarioUpload', again);
  });

  it('stores a large archive PUT to a presigned upload slot through the S3 object-created event', async () => {
    const skeleton = await fetch(`${service.api}/companies/acme/resources/scenarios/skeleton.zip?version=2.0.0`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    const archive = new Uint8Array(await skeleton.arrayBuffer());
    const slot = await call(`${service.upload}/companies/acme/resources/scenarios/uploads`, { method: 'POST', token: alice });
    expect(slot.status).toBe(201);
    await expectDocumented('ScenarioUploadSlot', slot);
    expect(slot.body).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/zip' } });
    expect(slot.headers.get('location')).toBe(`/companies/acme/resources/scenarios/uploads/${slot.body.uploadId}`);
    const status = () => call(`${service.upload}/companies/acme/resources/scenarios/uploads/${slot.body.uploadId}`, { token: alice });
    expect((await status()).body.status).toBe('PENDING');

    const put = await fetch(slot.body.url, { method: 'PUT', headers: slot.body.headers, body: archive });
    expect(put.status).toBe(200);
    await eventually(async () => (await status()).body.status !== 'PENDING', 'the upload to be processed');
    const stored = await expectDocumented('ScenarioUploadStatus', await status());
    expect(stored).toMatchObject({ status: 'STORED', result: { version: '2.0.0', size: archive.byteLength } });

    const second = await call(`${service.upload}/companies/acme/resources/scenarios/uploads`, { method: 'POST', token: alice });
    await fetch(second.body.url, { method: 'PUT', headers: second.body.headers, body: new TextEncoder().encode('not a zip') });
    const rejected = () => call(`${service.upload}/companies/acme/resources/scenarios/uploads/${second.body.uploadId}`, { token: alice });
    await eventually(async () => (await rejected()).body.status !== 'PENDING', 'the broken upload to be processed');
    expect(await expectDocumented('ScenarioUploadStatus', await rejected())).toMatchObject({
      status: 'REJECTED',
      problem: { status: 422, errors: [expect.objectContaining({ path: '' })] },
    });

    const foreign = await call(`${service.upload}/companies/acme/resources/scenarios/uploads/${slot.body.uploadId}`, { token: bob });
    expect(foreign.status).toBe(403);
    await expectDocumented('ScenarioUploadStatus', foreign);
  });

  it('makes an uploaded scenario searchable through the DynamoDB stream', async () => {
    await eventually(async () => {
      const found = await call(`${service.api}/resources/search?type=SCENARIO&pageSize=100`, { token: alice });
      return found.body.resources.some(
        (resource: { id: string; versions: string[] }) => resource.id === uploadedScenarioId && resource.versions.includes('1.0.1'),
      );
    }, 'the uploaded scenario in search');
  });

  it('deploys, reports every cause in request order, and lists active deployments', async () => {
    const deploy = (target: string, version: string, action = 'DEPLOY', targetType = 'DEVICE') => ({
      target: { type: targetType, id: target, subId: null },
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: version },
      action,
    });
    const response = await call(`${service.api}/companies/acme/resources/deployments`, {
      token: alice,
      json: {
        note: 'walkthrough',
        requests: [
          deploy('acme-kiosk-0001', '1.1.0'),
          deploy('acme-kiosk-0001', '1.1.0'),
          deploy('acme-kiosk-0999', '1.1.0'),
          deploy('acme-kiosk-0002', '7.0.0'),
          deploy('acme-kiosk-0002', '1.0.0', 'UNDEPLOY'),
          deploy('hall-a', '1.0.0', 'DEPLOY', 'GROUP'),
          deploy('acme-kiosk-0002', '1.0.0'),
        ],
      },
    });
    expect(response.status).toBe(200);
    await expectDocumented('DeploymentsExecute', response);
    expect(response.body.items.map((item: { state: string; cause: string | null }) => [item.state, item.cause])).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_DEPLOYED'],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'ALREADY_UNDEPLOYED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['SUCCESS', null],
    ]);
    expect(response.body.items[2]).toMatchObject({
      target: { type: 'DEVICE', id: 'acme-kiosk-0999', subId: null },
      what: { id: 'acme-welcome', subId: '1.1.0' },
    });

    const device = await call(`${service.api}/companies/acme/resources/acme-kiosk-0001/deployments`, { token: alice });
    expect(device.status).toBe(200);
    await expectDocumented('DeploymentsListDevice', device);
    expect(device.body).toEqual({
      items: [
        expect.objectContaining({
          id: response.body.items[0].id,
          state: 'SUCCESS',
          cause: null,
          action: 'DEPLOY',
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
          deployedBy: 'alice',
          note: 'walkthrough',
        }),
      ],
      nextCursor: null,
    });
    const all = await call(`${service.api}/companies/acme/resources/DEVICE/deployments`, { token: olivia });
    await expectDocumented('DeploymentsListAll', all);
    expect(all.body.items.map((item: { target: { id: string } }) => item.target.id).sort()).toEqual(['acme-kiosk-0001', 'acme-kiosk-0002']);

    const undeploy = await call(`${service.api}/companies/acme/resources/deployments`, {
      token: alice,
      json: { requests: [deploy('acme-kiosk-0002', '1.0.0', 'UNDEPLOY')] },
    });
    expect(undeploy.body.items[0]).toMatchObject({ state: 'SUCCESS', cause: null });
    const after = await call(`${service.api}/companies/acme/resources/acme-kiosk-0002/deployments`, { token: alice });
    expect(after.body.items).toEqual([]);
  });

  it('lists filters with live counts that match search totals, scoped to the caller', async () => {
    const filters = await call(`${service.api}/resources/search/filters?type=DEVICE`, { token: alice });
    expect(filters.status).toBe(200);
    await expectDocumented('SearchFilters', filters);
    const connection = filters.body.items.find((item: { field: string }) => item.field === 'connection.state');
    expect(connection).toMatchObject({ scope: 'DEVICE', definition: { type: 'ENUMERATION' } });
    expect(connection.definition.parameters.map((parameter: { value: string }) => parameter.value)).toEqual([
      'UNKNOWN',
      'CONNECTED',
      'DISCONNECTED',
    ]);
    let sum = 0;
    for (const parameter of connection.definition.parameters) {
      const search = await call(`${service.api}/resources/search?connection.state=${parameter.value}&type=DEVICE`, { token: alice });
      expect(search.body.total).toBe(parameter.count);
      sum += parameter.count;
    }
    expect(sum).toBe(120);
    const company = filters.body.items.find((item: { field: string }) => item.field === 'company');
    expect(company).toMatchObject({ scope: null, definition: { parameters: [{ name: 'Acme Retail', value: 'acme', count: 120 }] } });

    const oliviaFilters = await call(`${service.api}/resources/search/filters?type=DEVICE`, { token: olivia });
    const oliviaCompanies = oliviaFilters.body.items.find((item: { field: string }) => item.field === 'company').definition.parameters;
    expect(oliviaCompanies.map((parameter: { value: string; count: number }) => [parameter.value, parameter.count])).toEqual([
      ['acme', 120],
      ['globex', 120],
    ]);
  });

  it('searches with OR within a field, AND across fields, sorting and pagination', async () => {
    const base = `${service.api}/resources/search?type=DEVICE&connection.state=DISCONNECTED&connection.state=UNKNOWN`;
    const either = await call(`${base}&pageSize=100`, { token: alice });
    await expectDocumented('Search', either);
    expect(
      either.body.resources.every((device: { connection: { state: string } }) =>
        ['DISCONNECTED', 'UNKNOWN'].includes(device.connection.state),
      ),
    ).toBe(true);
    const disconnected = await call(`${service.api}/resources/search?connection.state=DISCONNECTED`, { token: alice });
    const unknown = await call(`${service.api}/resources/search?connection.state=UNKNOWN`, { token: alice });
    expect(either.body.total).toBe(disconnected.body.total + unknown.body.total);

    const both = await call(`${base}&health.mode=EMBEDDED_PLATFORM_ANDROID&sort=updated&direction=DESC&pageSize=5&page=2`, {
      token: alice,
    });
    expect(both.status).toBe(200);
    expect(both.body.page).toEqual({ page: 2, pages: Math.ceil(both.body.total / 5), pageSize: 5 });
    expect(both.body.sort).toEqual({ field: 'updated', direction: 'DESC' });
    expect(both.body.total).toBeLessThan(either.body.total);
    const updated = both.body.resources.map((device: { updated: string }) => device.updated);
    expect([...updated].sort().reverse()).toEqual(updated);
    for (const device of both.body.resources) {
      expect(device).toMatchObject({ type: 'DEVICE', company: 'acme', health: { mode: 'EMBEDDED_PLATFORM_ANDROID' } });
    }
  });

  it('lets global full text override every filter and never shows another company', async () => {
    const global = await call(`${service.api}/resources/search?global=Toulouse&connection.state=UNKNOWN`, { token: alice });
    expect(global.status).toBe(200);
    await expectDocumented('Search', global);
    expect(global.body.total).toBeGreaterThan(0);
    expect(global.body.sort).toEqual({ field: 'relevance', direction: 'DESC' });
    expect(global.body.resources.some((device: { connection: { state: string } }) => device.connection.state !== 'UNKNOWN')).toBe(true);
    expect(global.body.resources.every((device: { location: { name: string } }) => /toulouse/i.test(device.location.name))).toBe(true);

    const bobSearch = await call(`${service.api}/resources/search?pageSize=100`, { token: bob });
    await expectDocumented('Search', bobSearch);
    expect(bobSearch.body.resources.every((resource: { company: string }) => resource.company === 'globex')).toBe(true);
    const bobGlobal = await call(`${service.api}/resources/search?global=acme`, { token: bob });
    expect(bobGlobal.body.resources.every((resource: { company: string }) => resource.company === 'globex')).toBe(true);
  });
});

describe('restart', () => {
  it('keeps uploaded scenarios, active deployments and the search index', async () => {
    await service.stop();
    service = await startService(settings);
    expect(service.output()).not.toContain('Seeded the demo data');
    alice = await tokenFor(service, 'alice');
    const device = await call(`${service.api}/companies/acme/resources/acme-kiosk-0001/deployments`, { token: alice });
    expect(device.body.items).toHaveLength(1);
    const search = await call(`${service.api}/resources/search?type=SCENARIO`, { token: alice });
    expect(search.body.resources.map((resource: { id: string }) => resource.id)).toContain(uploadedScenarioId);
    const skeleton = await fetch(`${service.api}/companies/acme/resources/scenarios/skeleton.zip`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    const zip = await JSZip.loadAsync(await skeleton.arrayBuffer());
    const manifest = JSON.parse(await zip.file('scenario.json')!.async('string'));
    manifest.id = uploadedScenarioId;
    manifest.version = '1.0.1';
    zip.file('scenario.json', JSON.stringify(manifest));
    const again = await uploadArchive(service, alice, 'acme', await zip.generateAsync({ type: 'uint8array' }));
    expect(again.status).toBe(409);
  });
});
