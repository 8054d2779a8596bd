/**
 * Onboarding a customer end to end over `npm start` (bin/local.ts), as one story and through the API only (every
 * answer checked against the OpenAPI document): the platform administrator `root` creates company `initech` with a
 * 10 MiB quota and invites an operator and a viewer into it; the operator signs in with the temporary password, is
 * made to set a new one, then registers a kiosk, uploads a scenario and deploys it in initech; the viewer reads but
 * cannot write; alice, made company admin of acme, can neither see nor change initech's users nor grant
 * platform-admin; a disabled user's refresh fails at once; a 15 MiB archive in initech (through a presigned upload
 * slot: the upload address takes 10 MiB per request) is refused 413 with its quota;
 * and the audit log lists every change with its actor, for root and filtered by company and actor.
 */
import { describe, expect, it } from 'vitest';
import { expectOk, requestRefreshToken } from '../../client/index.js';
import { deploymentHelpers, entry, expectProblem, MiB, validArchive } from './failure-paths.js';
import { clientFor, eventually, expectError, tokenFor, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root'] });
const { postDeployments } = deploymentHelpers(() => local.service);

const as = (token: string) => clientFor(local.service, token).main;
const auth = () => clientFor(local.service).auth;

/** A new password that meets the policy (12 characters or more, every class). */
const NEW_PASSWORD = 'Initech-kiosks-2026!';

/** Signs `username` in with their temporary password and the new one: the challenge, then tokens. */
async function firstSignIn(username: string, temporaryPassword: string): Promise<{ accessToken: string; refreshToken: string }> {
  const challenged = await auth().POST('/token', { body: { username, password: temporaryPassword } });
  const challenge = expectError(challenged, 401) as { challenge?: string; detail: string };
  expect(challenge.challenge).toBe('new_password_required');
  expect(challenge.detail).toMatch(/new_password/);
  const signedIn = expectOk(await auth().POST('/token', { body: { username, password: temporaryPassword, new_password: NEW_PASSWORD } }));
  expect(signedIn.expires_in).toBe(900);
  // The temporary password is spent: the new one signs in, without a challenge.
  expectError(await auth().POST('/token', { body: { username, password: temporaryPassword } }), 401);
  expectOk(await auth().POST('/token', { body: { username, password: NEW_PASSWORD } }));
  return { accessToken: signedIn.access_token, refreshToken: signedIn.refresh_token as string };
}

describe('onboarding a company with its users', () => {
  it('takes initech from creation to a deployment, with every bound held and every change audited', { timeout: 180_000 }, async () => {
    const root = as(local.tokens.root);

    // Root creates initech and invites an operator and a viewer into it.
    expect((await root.POST('/admin/companies', { body: { id: 'initech', name: 'Initech', quotaBytes: 10 * MiB } })).response.status).toBe(
      201,
    );
    const invite = async (username: string, role: 'operator' | 'viewer') => {
      const invited = await root.POST('/admin/users', {
        body: { username, email: `${username}@initech.example`, role, companies: ['initech'] },
      });
      expect(invited.response.status).toBe(201);
      expect(invited.data?.user).toMatchObject({ username, role, companies: ['initech'], status: 'FORCE_CHANGE_PASSWORD' });
      return invited.data?.temporaryPassword as string;
    };
    const peter = await firstSignIn('peter', await invite('peter', 'operator'));
    const milton = await firstSignIn('milton', await invite('milton', 'viewer'));
    expect((await root.GET('/admin/users/{username}', { params: { path: { username: 'peter' } } })).data?.status).toBe('CONFIRMED');

    // The operator registers a kiosk, uploads a scenario and deploys it, in initech.
    const operator = as(peter.accessToken);
    const kiosk = await operator.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: 'initech', deviceId: 'initech-kiosk-1' } },
      body: { serial: 'INI-0001' },
    });
    expect(kiosk.response.status).toBe(201);
    const uploaded = await uploadArchive(local.service, peter.accessToken, 'initech', await validArchive('tps-report', '1.0.0'));
    expect(uploaded.response.status).toBe(201);
    const deployed = expectOk(await postDeployments(peter.accessToken, 'initech', [entry('initech-kiosk-1', 'tps-report', '1.0.0')]));
    expect(deployed.items.map((item) => [item.state, item.cause])).toEqual([['SUCCESS', null]]);
    // ...but not in acme.
    expectError(await operator.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId: 'acme' } } }), 403);

    // The viewer reads initech but writes nothing.
    const viewer = as(milton.accessToken);
    const usage = expectOk(
      await viewer.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId: 'initech' } } }),
    );
    expect(usage.usedBytes).toBeGreaterThan(0);
    expectError(await uploadArchive(local.service, milton.accessToken, 'initech', await validArchive('milton', '1.0.0')), 403);
    expectError(
      await viewer.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'initech' } },
        body: { requests: [entry('initech-kiosk-1', 'tps-report', '1.0.0', 'UNDEPLOY')] },
      }),
      403,
    );
    expectError(await viewer.GET('/admin/users', { params: { query: { company: 'initech' } } }), 403);

    // Alice, made company admin of acme, neither sees nor changes initech's users, nor grants platform-admin.
    expect(
      (await root.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'company-admin' } })).data,
    ).toMatchObject({ role: 'company-admin', companies: ['acme'] });
    const alice = as(await tokenFor(local.service, 'alice'));
    expectProblem(await alice.GET('/admin/users', { params: { query: { company: 'initech' } } }), 403, /initech/);
    expectError(await alice.GET('/admin/users/{username}', { params: { path: { username: 'peter' } } }), 404);
    expectError(await alice.PATCH('/admin/users/{username}', { params: { path: { username: 'peter' } }, body: { enabled: false } }), 404);
    expectError(
      await alice.POST('/admin/users', {
        body: { username: 'bill', email: 'bill@acme.example', role: 'platform-admin', companies: ['acme'] },
      }),
      403,
    );
    expectError(
      await alice.POST('/admin/users', {
        body: { username: 'lumbergh', email: 'l@initech.example', role: 'viewer', companies: ['initech'] },
      }),
      403,
    );
    expectError(
      await alice.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'platform-admin' } }),
      403,
    );
    expect((await root.GET('/admin/users/{username}', { params: { path: { username: 'peter' } } })).data).toMatchObject({
      role: 'operator',
      enabled: true,
    });
    expect((await root.GET('/admin/users/{username}', { params: { path: { username: 'bill' } } })).response.status).toBe(404);

    // A disabled user's refresh fails at once; until then it works.
    expectOk(await requestRefreshToken(auth(), milton.refreshToken));
    expect(
      (await root.PATCH('/admin/users/{username}', { params: { path: { username: 'milton' } }, body: { enabled: false } })).data?.enabled,
    ).toBe(false);
    const refused = await requestRefreshToken(auth(), milton.refreshToken);
    expect(refused.response.status).toBe(400);
    expect(refused.error).toMatchObject({ error: 'invalid_grant' });
    expectError(await auth().POST('/token', { body: { username: 'milton', password: NEW_PASSWORD } }), 401);

    // A 15 MiB archive goes through a presigned upload slot (above the upload address's 10 MiB request limit); its
    // outcome is initech's 413, with its quota.
    const large = await validArchive('tps-archive', '1.0.0', { 'resources/assets/video.bin': new Uint8Array(15 * MiB).fill(7) }, true);
    expect(large.byteLength).toBeGreaterThan(15 * MiB);
    const upload = clientFor(local.service, peter.accessToken).upload;
    const slot = expectOk(
      await upload.POST('/companies/{companyId}/resources/scenarios/uploads', { params: { path: { companyId: 'initech' } } }),
    );
    // The presigned URL is S3's (here the local stand-in's), outside the document: a plain PUT, as a client sends it.
    expect((await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: large })).status).toBe(200);
    const outcome = async () =>
      expectOk(
        await upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
          params: { path: { companyId: 'initech', uploadId: slot.uploadId } },
        }),
      );
    await eventually(async () => (await outcome()).status !== 'PENDING', 'the 15 MiB upload to be processed', 60_000);
    expect(await outcome()).toMatchObject({ status: 'REJECTED', problem: { status: 413, quotaBytes: 10 * MiB } });

    // The audit log lists every change with its actor, never a password.
    const audit = expectOk(await root.GET('/admin/audit', { params: { query: { company: 'initech', limit: 100 } } }));
    const changes = audit.items.map((item) => `${item.actor} ${item.action} ${item.target.id}`).reverse();
    expect(changes).toEqual([
      'root company.created initech',
      'root user.invited peter',
      'root user.invited milton',
      'root user.updated milton',
    ]);
    const disabled = audit.items.find((item) => item.action === 'user.updated');
    expect(disabled?.before).toMatchObject({ enabled: true });
    expect(disabled?.after).toMatchObject({ enabled: false });
    const byRoot = expectOk(await root.GET('/admin/audit', { params: { query: { actor: 'root', limit: 100 } } }));
    expect(byRoot.items.map((item) => `${item.action} ${item.target.id}`)).toContain('user.updated alice');
    expect(JSON.stringify(byRoot)).not.toMatch(/"(password|passwordHash|temporaryPassword|new_password)"|Initech-kiosks/);
  });
});
