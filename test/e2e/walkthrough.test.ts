/**
 * The walkthrough (docs/walkthrough.md) over real HTTP against `bin/local.ts` with embedded backends: token, skeleton, edit,
 * upload, deploy, list, filters, search, and a restart that keeps everything.
 */
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk, type paths } from '../../client/index.js';
import {
  clientFor,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  uploadArchive,
} from './harness.js';

type ConnectionState = components['schemas']['DeviceSearchResource']['connection']['state'];
type SearchQuery = NonNullable<paths['/resources/search']['get']['parameters']['query']>;

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

/** The typed client of the running service as the holder of `token`: every answer is checked against the document. */
const as = (token?: string) => clientFor(service, token);

/** Downloads a skeleton archive of `version` (default 1.0.0) for acme. */
const skeleton = (token: string, version?: string) =>
  as(token).main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
    params: { path: { companyId: 'acme' }, query: version === undefined ? {} : { version } },
    headers: { accept: 'application/zip' },
    parseAs: 'arrayBuffer',
  });

/** One page of search results for the holder of `token`. */
const search = async (token: string, query: SearchQuery) => expectOk(await as(token).main.GET('/resources/search', { params: { query } }));

const uploadStatus = (token: string, uploadId: string) =>
  as(token).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
    params: { path: { companyId: 'acme', uploadId } },
  });

describe('walkthrough, through the typed client', () => {
  it('issues a bearer token from the authentication service', async () => {
    const token = expectOk(await as().auth.POST('/token', { body: { username: 'alice', password: 'alice-demo-password' } }));
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(token.access_token.split('.')).toHaveLength(3);
    // The key set is application/jwk-set+json, which openapi-fetch parses as JSON like any other body.
    const jwks = expectOk(await as().auth.GET('/.well-known/jwks.json'));
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256' });
    expect(jwks.keys[0]?.d).toBeUndefined();
  });

  it('downloads a skeleton, edits it and uploads it (201), then refuses the same version (409)', async () => {
    const download = await skeleton(alice, '1.0.0');
    expect(download.response.status).toBe(200);
    expect(download.response.headers.get('content-type')).toBe('application/zip');
    const zip = await JSZip.loadAsync(expectOk(download));
    expect(zip.file('scenario.json')).not.toBeNull();
    expect(Object.keys(zip.files).some((name) => name.startsWith('resources/'))).toBe(true);
    const manifest = JSON.parse(await zip.file('scenario.json')!.async('string'));
    expect(manifest.version).toBe('1.0.0');

    manifest.name = 'Lobby loop';
    manifest.version = '1.0.1';
    zip.file('scenario.json', JSON.stringify(manifest));
    const edited = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });

    const created = await uploadArchive(service, alice, 'acme', edited, 'lobby-loop.zip');
    expect(created.response.status).toBe(201);
    const stored = expectOk(created);
    expect(stored).toMatchObject({ id: manifest.id, version: '1.0.1', name: 'Lobby loop', size: edited.byteLength });
    expect(stored.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(stored.created))).toBe(false);
    expect(created.response.headers.get('location')).toBe(`/companies/acme/resources/scenarios/${manifest.id}/versions/1.0.1`);
    uploadedScenarioId = manifest.id;

    const again = await uploadArchive(service, alice, 'acme', edited);
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ status: 409 });
  });

  it('stores a large archive PUT to a presigned upload slot through the S3 object-created event', async () => {
    const archive = new Uint8Array(expectOk(await skeleton(alice, '2.0.0')));
    const newSlot = () =>
      as(alice).upload.POST('/companies/{companyId}/resources/scenarios/uploads', { params: { path: { companyId: 'acme' } } });
    const granted = await newSlot();
    expect(granted.response.status).toBe(201);
    const slot = expectOk(granted);
    expect(slot).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/zip' } });
    expect(granted.response.headers.get('location')).toBe(`/companies/acme/resources/scenarios/uploads/${slot.uploadId}`);
    const status = async () => expectOk(await uploadStatus(alice, slot.uploadId));
    expect((await status()).status).toBe('PENDING');

    // The presigned URL is S3's (here the local stand-in's), outside the document: a plain PUT, as a client would send it.
    const put = await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: archive });
    expect(put.status).toBe(200);
    await eventually(async () => (await status()).status !== 'PENDING', 'the upload to be processed');
    expect(await status()).toMatchObject({ status: 'STORED', result: { version: '2.0.0', size: archive.byteLength } });

    const second = expectOk(await newSlot());
    await fetch(second.url, { method: 'PUT', headers: second.headers, body: new TextEncoder().encode('not a zip') });
    const rejected = async () => expectOk(await uploadStatus(alice, second.uploadId));
    await eventually(async () => (await rejected()).status !== 'PENDING', 'the broken upload to be processed');
    expect(await rejected()).toMatchObject({
      status: 'REJECTED',
      problem: { status: 422, errors: [expect.objectContaining({ path: '' })] },
    });

    const foreign = await uploadStatus(bob, slot.uploadId);
    expect(foreign.response.status).toBe(403);
    expect(foreign.error).toMatchObject({ status: 403 });
  });

  it('makes an uploaded scenario searchable through the DynamoDB stream', async () => {
    await eventually(async () => {
      const found = await search(alice, { type: ['SCENARIO'], pageSize: 100 });
      return found.resources.some(
        (resource) => resource.type === 'SCENARIO' && resource.id === uploadedScenarioId && resource.versions.includes('1.0.1'),
      );
    }, 'the uploaded scenario in search');
  });

  it('deploys, reports every cause in request order, and lists active deployments', async () => {
    const deploy = (target: string, version: string, action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY', targetType = 'DEVICE') => ({
      target: { type: targetType, id: target, subId: null },
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: version },
      action,
    });
    const execute = (body: components['schemas']['DeploymentRequestBody']) =>
      as(alice).main.POST('/companies/{companyId}/resources/deployments', { params: { path: { companyId: 'acme' } }, body });
    const listDevice = async (token: string, deviceId: string) =>
      expectOk(
        await as(token).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
          params: { path: { companyId: 'acme', deviceId } },
        }),
      );
    const response = expectOk(
      await execute({
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
      }),
    );
    expect(response.items.map((item) => [item.state, item.cause])).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_DEPLOYED'],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'ALREADY_UNDEPLOYED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['SUCCESS', null],
    ]);
    expect(response.items[2]).toMatchObject({
      target: { type: 'DEVICE', id: 'acme-kiosk-0999', subId: null },
      what: { id: 'acme-welcome', subId: '1.1.0' },
    });

    expect(await listDevice(alice, 'acme-kiosk-0001')).toEqual({
      items: [
        expect.objectContaining({
          id: response.items[0]?.id,
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
    const all = expectOk(
      await as(olivia).main.GET('/companies/{companyId}/resources/DEVICE/deployments', { params: { path: { companyId: 'acme' } } }),
    );
    expect(all.items.map((item) => item.target.id).sort()).toEqual(['acme-kiosk-0001', 'acme-kiosk-0002']);

    const undeploy = expectOk(await execute({ requests: [deploy('acme-kiosk-0002', '1.0.0', 'UNDEPLOY')] }));
    expect(undeploy.items[0]).toMatchObject({ state: 'SUCCESS', cause: null });
    expect((await listDevice(alice, 'acme-kiosk-0002')).items).toEqual([]);
  });

  it('lists filters with live counts that match search totals, scoped to the caller', async () => {
    const filtersOf = async (token: string) =>
      expectOk(await as(token).main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE' } } }));
    const filters = await filtersOf(alice);
    const connection = filters.items.find((item) => item.field === 'connection.state');
    expect(connection).toMatchObject({ name: 'Connection state', scope: 'DEVICE', definition: { type: 'ENUMERATION' } });
    const states = connection?.definition.parameters ?? [];
    expect(states.map((parameter) => parameter.value)).toEqual(['UNKNOWN', 'CONNECTED', 'DISCONNECTED']);
    let sum = 0;
    for (const parameter of states) {
      const found = await search(alice, { 'connection.state': [parameter.value as ConnectionState], type: ['DEVICE'] });
      expect(found.total).toBe(parameter.count);
      sum += parameter.count;
    }
    expect(sum).toBe(120);
    const company = filters.items.find((item) => item.field === 'company');
    expect(company).toMatchObject({ scope: null, definition: { parameters: [{ name: 'Acme Retail', value: 'acme', count: 120 }] } });

    const oliviaFilters = await filtersOf(olivia);
    const oliviaCompanies = oliviaFilters.items.find((item) => item.field === 'company')?.definition.parameters ?? [];
    expect(oliviaCompanies.map((parameter) => [parameter.value, parameter.count])).toEqual([
      ['acme', 120],
      ['globex', 120],
    ]);
  });

  it('searches with OR within a field, AND across fields, sorting and pagination', async () => {
    const base: SearchQuery = { type: ['DEVICE'], 'connection.state': ['DISCONNECTED', 'UNKNOWN'] };
    const either = await search(alice, { ...base, pageSize: 100 });
    expect(
      either.resources.every((device) => device.type === 'DEVICE' && ['DISCONNECTED', 'UNKNOWN'].includes(device.connection.state)),
    ).toBe(true);
    const disconnected = await search(alice, { 'connection.state': ['DISCONNECTED'] });
    const unknown = await search(alice, { 'connection.state': ['UNKNOWN'] });
    expect(either.total).toBe(disconnected.total + unknown.total);

    const both = await search(alice, {
      ...base,
      'health.mode': ['EMBEDDED_PLATFORM_ANDROID'],
      sort: 'updated',
      direction: 'DESC',
      pageSize: 5,
      page: 2,
    });
    expect(both.page).toEqual({ page: 2, pages: Math.ceil(both.total / 5), pageSize: 5 });
    expect(both.sort).toEqual({ field: 'updated', direction: 'DESC' });
    expect(both.total).toBeLessThan(either.total);
    const updated = both.resources.map((device) => device.updated);
    expect([...updated].sort().reverse()).toEqual(updated);
    for (const device of both.resources) {
      expect(device).toMatchObject({ type: 'DEVICE', company: 'acme', health: { mode: 'EMBEDDED_PLATFORM_ANDROID' } });
    }
  });

  it('lets global full text override every filter and never shows another company', async () => {
    const global = await search(alice, { global: 'Toulouse', 'connection.state': ['UNKNOWN'] });
    expect(global.total).toBeGreaterThan(0);
    expect(global.sort).toEqual({ field: 'relevance', direction: 'DESC' });
    const devices = global.resources.flatMap((resource) => (resource.type === 'DEVICE' ? [resource] : []));
    expect(devices).toHaveLength(global.resources.length);
    expect(devices.some((device) => device.connection.state !== 'UNKNOWN')).toBe(true);
    expect(devices.every((device) => /toulouse/i.test(device.location?.name ?? ''))).toBe(true);

    const bobSearch = await search(bob, { pageSize: 100 });
    expect(bobSearch.resources.every((resource) => resource.company === 'globex')).toBe(true);
    const bobGlobal = await search(bob, { global: 'acme' });
    expect(bobGlobal.resources.every((resource) => resource.company === 'globex')).toBe(true);
  });
});

describe('restart', () => {
  it('keeps uploaded scenarios, active deployments and the search index', async () => {
    await service.stop();
    service = await startService(settings);
    expect(service.output()).not.toContain('Seeded the demo data');
    alice = await tokenFor(service, 'alice');
    const device = expectOk(
      await as(alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: 'acme', deviceId: 'acme-kiosk-0001' } },
      }),
    );
    expect(device.items).toHaveLength(1);
    const scenarios = await search(alice, { type: ['SCENARIO'] });
    expect(scenarios.resources.map((resource) => resource.id)).toContain(uploadedScenarioId);
    const zip = await JSZip.loadAsync(expectOk(await skeleton(alice)));
    const manifest = JSON.parse(await zip.file('scenario.json')!.async('string'));
    manifest.id = uploadedScenarioId;
    manifest.version = '1.0.1';
    zip.file('scenario.json', JSON.stringify(manifest));
    const again = await uploadArchive(service, alice, 'acme', await zip.generateAsync({ type: 'uint8array' }));
    expect(again.response.status).toBe(409);
  });
});
