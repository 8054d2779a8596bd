/**
 * End-to-end: the device registry and the client credentials grant over real HTTP against one local service
 * (`bin/local.ts`): register (PUT, then bulk), read, issue credentials, get device tokens with the form and with
 * HTTP Basic, replace the credentials, find the device in search, delete it (its deployments undeployed with cause
 * DEVICE_DELETED in the history), and the company and scope boundaries.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  eventually,
  type JsonResult,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
} from './harness.js';

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let bob: string;
let olivia: string;

const DEVICE = 'e2e-kiosk-1';
const SERIAL = 'REGSERIAL9E2E01';

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings);
  [alice, bob, olivia] = await Promise.all([tokenFor(service, 'alice'), tokenFor(service, 'bob'), tokenFor(service, 'olivia')]);
});

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
});

const deviceUrl = (id: string, company = 'acme') => `${service.api}/companies/${company}/resources/devices/${id}`;

/** A client credentials request with the client authenticated in the form. */
function formToken(clientId: string, clientSecret: string): Promise<JsonResult> {
  return call(`${service.auth}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
}

/** A client credentials request with HTTP Basic client authentication (RFC 6749 §2.3.1). */
function basicToken(clientId: string, clientSecret: string): Promise<JsonResult> {
  const credential = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
  return call(`${service.auth}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${credential}` },
    body: 'grant_type=client_credentials',
  });
}

describe('device registry and device tokens', () => {
  let credentials: { clientId: string; clientSecret: string };

  it('registers a device (201), then updates it (200), answering the device resource', async () => {
    const created = await call(deviceUrl(DEVICE), {
      method: 'PUT',
      token: alice,
      json: { serial: SERIAL, location: { name: 'Lobby', description: 'Next to the lifts' } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'DEVICE',
      id: DEVICE,
      company: 'acme',
      serial: SERIAL,
      location: { name: 'Lobby' },
      connection: { state: 'UNKNOWN' },
    });
    expect(created.body).not.toHaveProperty('health');
    const updated = await call(deviceUrl(DEVICE), {
      method: 'PUT',
      token: alice,
      json: { geoLocation: { latitude: 43.6, longitude: 1.44 } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ serial: SERIAL, location: { name: 'Lobby' }, geoLocation: { latitude: 43.6, longitude: 1.44 } });
    expect(updated.body.created).toBe(created.body.created);

    const badId = await call(deviceUrl('bad~id'), { method: 'PUT', token: alice, json: { serial: 'x' } });
    expect(badId.status).toBe(400);
    expect(badId.body.errors.map((error: { path: string }) => error.path)).toEqual(['deviceId']);
    const noSerial = await call(deviceUrl('e2e-kiosk-new'), { method: 'PUT', token: alice, json: {} });
    expect(noSerial.status).toBe(400);
  });

  it('registers in bulk: one result per entry in order, a bad entry FAILURE with errors, the rest written', async () => {
    const response = await call(`${service.api}/companies/acme/resources/devices`, {
      token: alice,
      json: [
        { id: 'e2e-kiosk-2', serial: 'SN-E2E-2' },
        { id: 'e2e-kiosk-3', serial: 42 },
        { id: DEVICE, location: { name: 'Main lobby' } },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: 'e2e-kiosk-2', state: 'CREATED' },
      { id: 'e2e-kiosk-3', state: 'FAILURE', errors: [{ path: '/1/serial', message: expect.any(String) }] },
      { id: DEVICE, state: 'UPDATED' },
    ]);
    expect((await call(deviceUrl('e2e-kiosk-2'), { token: alice })).status).toBe(200);
    expect((await call(deviceUrl('e2e-kiosk-3'), { token: alice })).status).toBe(404);
    const tooMany = Array.from({ length: 5_001 }, (_, index) => ({ id: `bulk-${index}`, serial: 'x' }));
    expect((await call(`${service.api}/companies/acme/resources/devices`, { token: alice, json: tooMany })).status).toBe(413);
  });

  it('reads the device back; olivia may read but not write; bob (globex) does not see it', async () => {
    const got = await call(deviceUrl(DEVICE), { token: olivia });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: DEVICE, serial: SERIAL, location: { name: 'Main lobby' } });
    expect(JSON.stringify(got.body)).not.toMatch(/credential|secretHash|deleting/);
    expect((await call(deviceUrl(DEVICE), { method: 'PUT', token: olivia, json: { serial: 'olivia' } })).status).toBe(403);
    expect((await call(`${deviceUrl(DEVICE)}/credentials`, { method: 'POST', token: olivia })).status).toBe(403);
    expect((await call(deviceUrl(DEVICE), { method: 'DELETE', token: olivia })).status).toBe(403);
    expect((await call(deviceUrl(DEVICE), { token: bob })).status).toBe(403);
    expect((await call(deviceUrl(DEVICE, 'globex'), { token: bob })).status).toBe(404);
    expect((await call(`${deviceUrl(DEVICE)}/credentials`, { method: 'POST', token: bob })).status).toBe(403);
  });

  it('issues credentials (201, not cached; 404 for an absent device)', async () => {
    const issued = await call(`${deviceUrl(DEVICE)}/credentials`, { method: 'POST', token: alice });
    expect(issued.status).toBe(201);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    expect(issued.body.clientId).toBe(`acme~${DEVICE}`);
    expect(issued.body.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    credentials = issued.body;
    expect((await call(`${deviceUrl('e2e-kiosk-absent')}/credentials`, { method: 'POST', token: alice })).status).toBe(404);
  });

  it('gives a device token for the client credentials, in the form and with HTTP Basic; refuses a wrong secret', async () => {
    const viaForm = await formToken(credentials.clientId, credentials.clientSecret);
    expect(viaForm.status).toBe(200);
    expect(viaForm.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    const claims = decodeJwt(viaForm.body.access_token);
    expect(claims).toMatchObject({ sub: DEVICE, companies: ['acme'], scope: 'device', client_id: `acme~${DEVICE}` });
    expect(claims.exp).toBe((claims.iat as number) + 900);

    const viaBasic = await basicToken(credentials.clientId, credentials.clientSecret);
    expect(viaBasic.status).toBe(200);
    expect(decodeJwt(viaBasic.body.access_token).cred).toBe(claims.cred);

    // A device token acts only as its device: user routes refuse it.
    expect((await call(deviceUrl(DEVICE), { token: viaForm.body.access_token })).status).toBe(403);

    const wrong = await formToken(credentials.clientId, 'not-the-secret');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toMatch(/^application\/json/);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toBeNull();
    const wrongBasic = await basicToken(credentials.clientId, 'not-the-secret');
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.headers.get('www-authenticate')).toBe('Basic realm="device"');
    const unknown = await formToken('acme~e2e-kiosk-absent', credentials.clientSecret);
    expect([unknown.status, unknown.body.error]).toEqual([401, 'invalid_client']);

    const otherGrant = await call(`${service.auth}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&username=alice&password=alice-demo-password',
    });
    expect([otherGrant.status, otherGrant.body.error]).toEqual([400, 'unsupported_grant_type']);
    const malformed = await call(`${service.auth}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${credentials.clientId}`,
    });
    expect([malformed.status, malformed.body.error]).toEqual([400, 'invalid_request']);
    // The users' JSON form is unchanged.
    expect((await call(`${service.auth}/token`, { json: { username: 'alice', password: 'wrong' } })).status).toBe(401);
  });

  it('new credentials make the old secret stop working', async () => {
    const renewed = await call(`${deviceUrl(DEVICE)}/credentials`, { method: 'POST', token: alice });
    expect(renewed.status).toBe(201);
    expect(renewed.body.clientSecret).not.toBe(credentials.clientSecret);
    const old = await formToken(credentials.clientId, credentials.clientSecret);
    expect([old.status, old.body.error]).toEqual([401, 'invalid_client']);
    const current = await formToken(renewed.body.clientId, renewed.body.clientSecret);
    expect(current.status).toBe(200);
    credentials = renewed.body;
  });

  it('finds the registered device in search by its serial', async () => {
    const query = `${service.api}/resources/search?global=${SERIAL}&company=acme`;
    await eventually(async () => (await call(query, { token: alice })).body.total === 1, 'the device in search');
    const found = await call(query, { token: alice });
    expect(found.body.resources[0]).toMatchObject({ type: 'DEVICE', id: DEVICE, company: 'acme', serial: SERIAL });
    expect(JSON.stringify(found.body)).not.toMatch(/credential|secretHash/);
  });

  it('deletes the device (204): its deployments are undeployed with DEVICE_DELETED, it leaves search, its credentials stop', async () => {
    const deployed = await call(`${service.api}/companies/acme/resources/deployments`, {
      token: alice,
      json: {
        requests: ['1.0.0', '1.1.0'].map((version) => ({
          target: { type: 'DEVICE', id: DEVICE },
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: version },
          action: 'DEPLOY',
        })),
      },
    });
    expect(deployed.body.items.map((item: { state: string }) => item.state)).toEqual(['SUCCESS', 'SUCCESS']);

    const deleted = await call(deviceUrl(DEVICE), { method: 'DELETE', token: alice });
    expect(deleted.status).toBe(204);
    expect((await call(deviceUrl(DEVICE), { token: alice })).status).toBe(404);
    expect((await call(deviceUrl(DEVICE), { method: 'DELETE', token: alice })).status).toBe(404);

    const active = await call(`${service.api}/companies/acme/resources/DEVICE/deployments?limit=1000`, { token: alice });
    expect(active.body.items.filter((item: { target: { id: string } }) => item.target.id === DEVICE)).toEqual([]);
    const historyUrl = `${service.api}/companies/acme/resources/deployments/history?deviceId=${DEVICE}`;
    const undeploys = async () =>
      (
        (await call(historyUrl, { token: alice })).body.items as {
          action: string;
          state: string;
          cause: string | null;
          by: string;
          what: { subId: string };
        }[]
      ).filter((item) => item.action === 'UNDEPLOY');
    await eventually(async () => (await undeploys()).length === 2, 'two UNDEPLOY history entries');
    for (const entry of await undeploys()) expect(entry).toMatchObject({ state: 'SUCCESS', cause: 'DEVICE_DELETED', by: 'alice' });
    expect((await undeploys()).map((entry) => entry.what.subId).sort()).toEqual(['1.0.0', '1.1.0']);

    const redeploy = await call(`${service.api}/companies/acme/resources/deployments`, {
      token: alice,
      json: {
        requests: [
          { target: { type: 'DEVICE', id: DEVICE }, what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' }, action: 'DEPLOY' },
        ],
      },
    });
    expect(redeploy.body.items[0].cause).toBe('TARGET_NOT_FOUND');

    const afterDelete = await formToken(credentials.clientId, credentials.clientSecret);
    expect([afterDelete.status, afterDelete.body.error]).toEqual([401, 'invalid_client']);

    const query = `${service.api}/resources/search?global=${SERIAL}&company=acme`;
    await eventually(async () => (await call(query, { token: alice })).body.total === 0, 'the device out of search');
  });
});
