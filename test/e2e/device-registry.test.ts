/**
 * End-to-end: the device registry and the client credentials grant over real HTTP against one local service
 * (`bin/local.ts`): register (PUT, then bulk), read, issue credentials, get device tokens with the form and with
 * HTTP Basic, replace the credentials, find the device in search, delete it (its deployments undeployed with cause
 * DEVICE_DELETED in the history), and the company and scope boundaries.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { answerOf, call, clientFor, deviceTokenRequest, eventually, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });

const DEVICE = 'e2e-kiosk-1';
const SERIAL = 'REGSERIAL9E2E01';

/** The typed client as the holder of `token`; answers are checked against the document. */
const as = (token: string) => clientFor(local.service, token);

const path = (deviceId: string, companyId = 'acme') => ({ params: { path: { companyId, deviceId } } });
const getDevice = (token: string, deviceId: string, company = 'acme') =>
  as(token).main.GET('/companies/{companyId}/resources/devices/{deviceId}', path(deviceId, company));
const putDevice = (token: string, deviceId: string, body: components['schemas']['DeviceBody']) =>
  as(token).main.PUT('/companies/{companyId}/resources/devices/{deviceId}', { ...path(deviceId), body });
const deleteDevice = (token: string, deviceId: string) =>
  as(token).main.DELETE('/companies/{companyId}/resources/devices/{deviceId}', path(deviceId));
const issueCredentials = (token: string, deviceId: string) =>
  as(token).main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', path(deviceId));
const searchSerial = async () =>
  expectOk(await as(local.tokens.alice).main.GET('/resources/search', { params: { query: { global: SERIAL, company: ['acme'] } } }));

/** A client credentials request with the client authenticated in the form, as the status, headers and body. */
async function formToken(clientId: string, clientSecret: string) {
  return answerOf(await deviceTokenRequest(local.service, clientId, clientSecret));
}

/** A client credentials request with HTTP Basic client authentication (RFC 6749 §2.3.1). */
async function basicToken(clientId: string, clientSecret: string) {
  const credential = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
  const result = await clientFor(local.service).auth.POST('/token', {
    body: { grant_type: 'client_credentials' },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${credential}` },
  });
  return answerOf(result);
}

describe('device registry and device tokens', () => {
  let credentials: { clientId: string; clientSecret: string };

  it('registers a device (201), then updates it (200), answering the device resource', async () => {
    const creation = await putDevice(local.tokens.alice, DEVICE, {
      serial: SERIAL,
      location: { name: 'Lobby', description: 'Next to the lifts' },
    });
    expect(creation.response.status).toBe(201);
    const created = expectOk(creation);
    expect(created).toMatchObject({
      type: 'DEVICE',
      id: DEVICE,
      company: 'acme',
      serial: SERIAL,
      location: { name: 'Lobby' },
      connection: { state: 'UNKNOWN' },
    });
    expect(created).not.toHaveProperty('health');
    const update = await putDevice(local.tokens.alice, DEVICE, { geoLocation: { latitude: 43.6, longitude: 1.44 } });
    expect(update.response.status).toBe(200);
    const updated = expectOk(update);
    expect(updated).toMatchObject({ serial: SERIAL, location: { name: 'Lobby' }, geoLocation: { latitude: 43.6, longitude: 1.44 } });
    expect(updated.created).toBe(created.created);

    const badId = expectError(await putDevice(local.tokens.alice, 'bad~id', { serial: 'x' }), 400);
    expect(badId.errors?.map((error) => error.path)).toEqual(['deviceId']);
    const noSerial = await putDevice(local.tokens.alice, 'e2e-kiosk-new', {});
    expect(noSerial.response.status).toBe(400);
  });

  it('registers in bulk: one result per entry in order, a bad entry FAILURE with errors, the rest written', async () => {
    // Hand-built: the second entry's serial is a number, which the typed client does not let through.
    const response = await call(`${local.service.api}/companies/acme/resources/devices`, {
      token: local.tokens.alice,
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
    expect((await getDevice(local.tokens.alice, 'e2e-kiosk-2')).response.status).toBe(200);
    expect((await getDevice(local.tokens.alice, 'e2e-kiosk-3')).response.status).toBe(404);
    const tooMany = Array.from({ length: 5_001 }, (_, index) => ({ id: `bulk-${index}`, serial: 'x' }));
    const refused = await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices', {
      params: { path: { companyId: 'acme' } },
      body: tooMany,
    });
    expect(refused.response.status).toBe(413);
  });

  it('refuses control characters in a serial or location (400 naming the member), keeps bidirectional text as sent', async () => {
    // What an attacker's device would register to recolour, retitle or clear an operator's terminal.
    const refused = expectError(
      await putDevice(local.tokens.alice, 'e2e-kiosk-escape', {
        serial: '\u001b[31mRED\u001b[0m\u001b]0;pwned\u0007',
        location: { name: '\u001b[2J\u001b[HCLEARED', description: 'Two\nlines' },
      }),
      400,
    );
    expect(refused.errors).toEqual([
      { path: '/serial', message: expect.stringContaining('U+001B at character 1') },
      { path: '/location/name', message: expect.stringContaining('U+001B at character 1') },
    ]);
    const bulk = expectOk(
      await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices', {
        params: { path: { companyId: 'acme' } },
        body: [{ id: 'e2e-kiosk-bell', serial: 'SN-BELL', location: { description: 'rings\u0007' } }],
      }),
    );
    expect(bulk).toEqual([
      { id: 'e2e-kiosk-bell', state: 'FAILURE', errors: [{ path: '/0/location/description', message: expect.stringContaining('U+0007') }] },
    ]);
    expect((await getDevice(local.tokens.alice, 'e2e-kiosk-escape')).response.status).toBe(404);

    const rtl = { serial: 'SN-RTL-1', location: { name: '\u202Egnp.exe\u202C', description: 'Line one\r\n\tline two' } };
    expect(expectOk(await putDevice(local.tokens.alice, 'e2e-kiosk-rtl', rtl))).toMatchObject(rtl);
  });

  it('refuses device ids that are path segments of the API (400 naming the id), one by one and in bulk', async () => {
    for (const id of ['DEVICE', 'scenarios']) {
      const refused = expectError(await putDevice(local.tokens.alice, id, { serial: 'SN-RESERVED' }), 400);
      expect(refused.errors).toEqual([{ path: 'deviceId', message: expect.stringContaining(`'${id}' cannot be a new device's id`) }]);
    }
    const bulk = expectOk(
      await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/devices', {
        params: { path: { companyId: 'acme' } },
        body: [{ id: 'deployments', serial: 'SN-RESERVED' }],
      }),
    );
    expect(bulk).toEqual([
      { id: 'deployments', state: 'FAILURE', errors: [{ path: '/0/id', message: expect.stringContaining('path segment') }] },
    ]);
    expect((await getDevice(local.tokens.alice, 'DEVICE')).response.status).toBe(404);
  });

  it('reads the device back; olivia may read but not write; bob (globex) does not see it', async () => {
    const got = expectOk(await getDevice(local.tokens.olivia, DEVICE));
    expect(got).toMatchObject({ id: DEVICE, serial: SERIAL, location: { name: 'Main lobby' } });
    expect(JSON.stringify(got)).not.toMatch(/credential|secretHash|deleting/);
    expect((await putDevice(local.tokens.olivia, DEVICE, { serial: 'olivia' })).response.status).toBe(403);
    expect((await issueCredentials(local.tokens.olivia, DEVICE)).response.status).toBe(403);
    expect((await deleteDevice(local.tokens.olivia, DEVICE)).response.status).toBe(403);
    expect((await getDevice(local.tokens.bob, DEVICE)).response.status).toBe(403);
    expect((await getDevice(local.tokens.bob, DEVICE, 'globex')).response.status).toBe(404);
    expect((await issueCredentials(local.tokens.bob, DEVICE)).response.status).toBe(403);
  });

  it('issues credentials (201, not cached; 404 for an absent device)', async () => {
    const issued = await issueCredentials(local.tokens.alice, DEVICE);
    expect(issued.response.status).toBe(201);
    expect(issued.response.headers.get('cache-control')).toBe('no-store');
    credentials = expectOk(issued);
    expect(credentials.clientId).toBe(`acme~${DEVICE}`);
    expect(credentials.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await issueCredentials(local.tokens.alice, 'e2e-kiosk-absent')).response.status).toBe(404);
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
    expect((await getDevice(viaForm.body.access_token, DEVICE)).response.status).toBe(403);

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

    // Hand-built: a grant other than client credentials, and a form without grant_type.
    const otherGrant = await call(`${local.service.auth}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&username=alice&password=alice-demo-password',
    });
    expect([otherGrant.status, otherGrant.body.error]).toEqual([400, 'unsupported_grant_type']);
    const malformed = await call(`${local.service.auth}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=${credentials.clientId}`,
    });
    expect([malformed.status, malformed.body.error]).toEqual([400, 'invalid_request']);
    // The users' JSON form is unchanged.
    expect((await clientFor(local.service).auth.POST('/token', { body: { username: 'alice', password: 'wrong' } })).response.status).toBe(
      401,
    );
  });

  it('new credentials make the old secret stop working', async () => {
    const renewal = await issueCredentials(local.tokens.alice, DEVICE);
    expect(renewal.response.status).toBe(201);
    const renewed = expectOk(renewal);
    expect(renewed.clientSecret).not.toBe(credentials.clientSecret);
    const old = await formToken(credentials.clientId, credentials.clientSecret);
    expect([old.status, old.body.error]).toEqual([401, 'invalid_client']);
    const current = await formToken(renewed.clientId, renewed.clientSecret);
    expect(current.status).toBe(200);
    credentials = renewed;
  });

  it('finds the registered device in search by its serial', async () => {
    await eventually(async () => (await searchSerial()).total === 1, 'the device in search');
    const found = await searchSerial();
    expect(found.resources[0]).toMatchObject({ type: 'DEVICE', id: DEVICE, company: 'acme', serial: SERIAL });
    expect(JSON.stringify(found)).not.toMatch(/credential|secretHash/);
  });

  it('deletes the device (204): its deployments are undeployed with DEVICE_DELETED, it leaves search, its credentials stop', async () => {
    const deploy = async (versions: string[]) =>
      expectOk(
        await as(local.tokens.alice).main.POST('/companies/{companyId}/resources/deployments', {
          params: { path: { companyId: 'acme' } },
          body: {
            requests: versions.map((version) => ({
              target: { type: 'DEVICE', id: DEVICE },
              what: { type: 'SCENARIO', id: 'acme-welcome', subId: version },
              action: 'DEPLOY' as const,
            })),
          },
        }),
      );
    expect((await deploy(['1.0.0', '1.1.0'])).items.map((item) => item.state)).toEqual(['SUCCESS', 'SUCCESS']);

    expect((await deleteDevice(local.tokens.alice, DEVICE)).response.status).toBe(204);
    expect((await getDevice(local.tokens.alice, DEVICE)).response.status).toBe(404);
    expect((await deleteDevice(local.tokens.alice, DEVICE)).response.status).toBe(404);

    const active = expectOk(
      await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
        params: { path: { companyId: 'acme' }, query: { limit: 1000 } },
      }),
    );
    expect(active.items.filter((item) => item.target.id === DEVICE)).toEqual([]);
    const undeploys = async () =>
      expectOk(
        await as(local.tokens.alice).main.GET('/companies/{companyId}/resources/deployments/history', {
          params: { path: { companyId: 'acme' }, query: { deviceId: DEVICE } },
        }),
      ).items.flatMap((item) => (item.kind === 'ACTION' && item.action === 'UNDEPLOY' ? [item] : []));
    await eventually(async () => (await undeploys()).length === 2, 'two UNDEPLOY history entries');
    for (const entry of await undeploys()) expect(entry).toMatchObject({ state: 'SUCCESS', cause: 'DEVICE_DELETED', by: 'alice' });
    expect((await undeploys()).map((entry) => entry.what.subId).sort()).toEqual(['1.0.0', '1.1.0']);

    expect((await deploy(['1.0.0'])).items[0]?.cause).toBe('TARGET_NOT_FOUND');

    const afterDelete = await formToken(credentials.clientId, credentials.clientSecret);
    expect([afterDelete.status, afterDelete.body.error]).toEqual([401, 'invalid_client']);

    await eventually(async () => (await searchSerial()).total === 0, 'the device out of search');
  });
});
