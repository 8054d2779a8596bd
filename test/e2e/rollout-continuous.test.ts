/**
 * End-to-end over `npm start` (bin/local.ts): continuous rollouts, driven by the devices table's stream as on AWS. A
 * continuous rollout created on a health version code deploys to a device registered after its creation once that
 * device reports the code, and to a device whose health changes into the code, exactly once each (later reports add
 * nothing); once cancelled, a device that starts matching gets nothing (shown by a second continuous rollout that the
 * same device joins afterwards, through the same ordered stream); a device of another company with the same health
 * never joins, while its own company's continuous rollout takes it; `dss rollout create --continuous` makes one and
 * `dss rollout get` shows how many joined. The version codes are unique to this file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { deviceToken } from '../support/device-token.js';
import { dssJson, dssUser, runDss } from './cli-runner.js';
import { clientFor, DEMO_PASSWORDS, eventually, expectError, useLocalService } from './harness.js';
import { readRollout } from './rollout-reads.js';

type Rollout = components['schemas']['Rollout'];
type HealthReport = components['schemas']['DeviceHealthReport'];

const RUN = Date.now().toString(36);
/** The code every continuous rollout of acme below selects, and codes no rollout selects. */
const CODE = `e2e-continuous-${RUN}`;
const OTHER_CODE = `e2e-elsewhere-${RUN}`;
const CONTROL_CODE = `e2e-control-${RUN}`;

const local = useLocalService({ users: ['alice', 'bob'], ownDynamoDbPort: true });
const issuer = () => ({ ...local.service, dynamoDbEndpoint: local.dynamoDbEndpoint });
const alice = () => clientFor(local.service, local.tokens.alice);
const bob = () => clientFor(local.service, local.tokens.bob);
type Client = ReturnType<typeof alice>;

const health = (versionCode: string, mode: HealthReport['mode'] = 'EMBEDDED_PLATFORM_ANDROID'): HealthReport => ({
  versionCode,
  versionName: versionCode,
  mode,
  hubs: [],
});

/** Registers `deviceId` in `company` and gives it a device token. */
async function register(client: Client, company: string, deviceId: string): Promise<string> {
  const results = expectOk(
    await client.main.POST('/companies/{companyId}/resources/devices', {
      params: { path: { companyId: company } },
      body: [{ id: deviceId, serial: `SN-${deviceId}` }],
    }),
  );
  expect(results[0]?.state).toBe('CREATED');
  return (await deviceToken(issuer(), company, deviceId)).token;
}

/** The device reports its health (PUT /device/health with its own token). */
async function report(token: string, body: HealthReport): Promise<void> {
  expect((await clientFor(local.service, token).main.PUT('/device/health', { body })).response.status).toBe(204);
}

/** A continuous DEPLOY rollout of `company`'s scenario version on the devices whose health version code is `code`. */
async function createContinuous(client: Client, company: string, scenario: string, code: string): Promise<Rollout> {
  return expectOk(
    await client.main.POST('/companies/{companyId}/resources/rollouts', {
      params: { path: { companyId: company } },
      body: {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: scenario, subId: '1.0.0' },
        targets: { query: `health.versionCode=${code}` },
        continuous: true,
        note: `continuous ${code}`,
      },
    }),
  );
}

/** The history's ACTION entries of `deviceId` (every DEPLOY attempted on it), newest first. */
async function actionsOn(client: Client, company: string, deviceId: string) {
  const page = expectOk(
    await client.main.GET('/companies/{companyId}/resources/deployments/history', {
      params: { path: { companyId: company }, query: { deviceId, limit: 100 } },
    }),
  );
  return page.items.filter((entry) => entry.kind === 'ACTION');
}

/** Waits until the search shows `deviceId` with health version code `code` (the stream has carried the report). */
async function searchable(client: Client, company: string, deviceId: string, code: string): Promise<void> {
  await eventually(async () => {
    const found = expectOk(
      await client.main.GET('/resources/search', { params: { query: { company: [company], 'health.versionCode': [code] } } }),
    );
    return found.resources.some((resource) => resource.id === deviceId);
  }, `${deviceId} searchable with ${code}`);
}

let existingToken: string;

beforeAll(async () => {
  // A device that exists, with another version code, before any rollout: its health changes into the query later.
  existingToken = await register(alice(), 'acme', `acme-cont-existing-${RUN}`);
  await report(existingToken, health(OTHER_CODE));
  // The rollout's one target at creation.
  await report(await register(alice(), 'acme', `acme-cont-first-${RUN}`), health(CODE));
  await searchable(alice(), 'acme', `acme-cont-first-${RUN}`, CODE);
}, 120_000);

describe('a continuous rollout', () => {
  let rollout: Rollout;

  afterAll(async () => {
    // Leave nothing RUNNING for the tests that follow in this file's service.
    if (rollout !== undefined && (await readRollout(alice(), 'acme', rollout.id)).state !== 'CANCELLED') {
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id } },
      });
    }
  });

  it('deploys to a device registered after its creation, and to one whose health changes into the query, once each', async () => {
    rollout = await createContinuous(alice(), 'acme', 'acme-welcome', CODE);
    expect(rollout).toMatchObject({ state: 'RUNNING', targets: 1, continuous: true, joined: 0 });
    await eventually(
      async () => (await actionsOn(alice(), 'acme', `acme-cont-first-${RUN}`)).length === 1,
      'the first wave deployed its target',
    );

    const lateId = `acme-cont-late-${RUN}`;
    const late = await register(alice(), 'acme', lateId);
    await report(late, health(CODE));
    await report(existingToken, health(CODE));
    const existingId = `acme-cont-existing-${RUN}`;
    for (const deviceId of [lateId, existingId]) {
      await eventually(async () => (await actionsOn(alice(), 'acme', deviceId)).length === 1, `${deviceId} deployed`);
      const [action] = await actionsOn(alice(), 'acme', deviceId);
      expect(action).toMatchObject({ action: 'DEPLOY', note: `continuous ${CODE}`, by: 'alice' });
    }
    await eventually(async () => (await readRollout(alice(), 'acme', rollout.id)).joined === 2, 'two devices joined');

    // Later changes of both devices (still matching) add nothing: shown once the search holds the last change.
    await report(late, health(CODE, 'SERVER'));
    await report(existingToken, health(CODE, 'SERVER'));
    await eventually(async () => {
      const found = expectOk(
        await alice().main.GET('/resources/search', {
          params: { query: { company: ['acme'], 'health.versionCode': [CODE], 'health.mode': ['SERVER'] } },
        }),
      );
      return found.resources.length === 2;
    }, 'the later changes searchable');
    const viewed = await readRollout(alice(), 'acme', rollout.id);
    expect(viewed.joined).toBe(2);
    expect(viewed.waves.at(-1)?.size).toBe(3);
    expect(viewed.waves.at(-1)?.counts.SUCCESS).toBe(3);
    for (const deviceId of [lateId, existingId]) expect(await actionsOn(alice(), 'acme', deviceId)).toHaveLength(1);
    // The targets listing has them after the target of creation, in the last wave.
    const targets = expectOk(
      await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id } },
      }),
    );
    expect(targets.items.map((target) => [target.deviceId, target.wave, target.result.state])).toEqual([
      [`acme-cont-first-${RUN}`, 1, 'SUCCESS'],
      ...[existingId, lateId].sort().map((deviceId) => [deviceId, 1, 'SUCCESS']),
    ]);
  });

  it('takes no device once cancelled', async () => {
    expectOk(
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: 'acme', rolloutId: rollout.id } },
      }),
    );
    const control = await createContinuous(alice(), 'acme', 'acme-welcome', CONTROL_CODE);
    try {
      // The device matches the cancelled rollout, then the control one: its two changes pass the stream in order, so
      // once the control's deployment is there, the first change has been handled too.
      const afterId = `acme-cont-after-${RUN}`;
      const token = await register(alice(), 'acme', afterId);
      await report(token, health(CODE));
      await report(token, health(CONTROL_CODE));
      await eventually(async () => (await readRollout(alice(), 'acme', control.id)).joined === 1, 'the control rollout took it');
      // The history is derived from the deployments' own stream: it follows shortly.
      await eventually(async () => (await actionsOn(alice(), 'acme', afterId)).length > 0, 'the history of its deployment');
      const actions = await actionsOn(alice(), 'acme', afterId);
      expect(actions.map((action) => action.note)).toEqual([`continuous ${CONTROL_CODE}`]);
      expect((await readRollout(alice(), 'acme', rollout.id)).joined).toBe(2);
    } finally {
      await alice().main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
        params: { path: { companyId: 'acme', rolloutId: control.id } },
      });
    }
  });

  it("never takes another company's device; that company's own continuous rollout does", async () => {
    const acme = await createContinuous(alice(), 'acme', 'acme-welcome', `${CODE}-shared`);
    const globex = await createContinuous(bob(), 'globex', 'globex-timetable', `${CODE}-shared`);
    try {
      const strangerId = `globex-cont-${RUN}`;
      await report(await register(bob(), 'globex', strangerId), health(`${CODE}-shared`));
      await eventually(async () => (await readRollout(bob(), 'globex', globex.id)).joined === 1, "globex's rollout took it");
      await eventually(async () => (await actionsOn(bob(), 'globex', strangerId)).length > 0, 'the history of its deployment');
      expect((await actionsOn(bob(), 'globex', strangerId)).map((action) => action.note)).toEqual([`continuous ${CODE}-shared`]);
      expect((await readRollout(alice(), 'acme', acme.id)).joined).toBe(0);
    } finally {
      for (const [client, company, id] of [
        [alice(), 'acme', acme.id],
        [bob(), 'globex', globex.id],
      ] as const) {
        await client.main.POST('/companies/{companyId}/resources/rollouts/{rolloutId}/cancel', {
          params: { path: { companyId: company, rolloutId: id } },
        });
      }
    }
  });

  it('refuses continuous with listed ids: 400 naming /continuous', async () => {
    const refused = await alice().main.POST('/companies/{companyId}/resources/rollouts', {
      params: { path: { companyId: 'acme' } },
      body: {
        action: 'DEPLOY',
        what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
        targets: { ids: ['acme-kiosk-0001'] },
        continuous: true,
      },
    });
    expect(expectError(refused, 400).errors?.map((error) => error.path)).toContain('continuous');
  });
});

describe('dss rollout create --continuous', () => {
  it('creates a continuous rollout of a query, and get shows how many devices joined', async () => {
    const work = await mkdtemp(join(tmpdir(), 'dss-rollout-continuous-'));
    try {
      const user = await dssUser(local.service, { configDirectory: join(work, 'config-alice') });
      const login = await runDss(user, ['login', '--username', 'alice', '--password-stdin'], { stdin: `${DEMO_PASSWORDS.alice}\n` });
      expect(login.code, login.stderr).toBe(0);
      const code = `${CODE}-cli`;
      const created = await dssJson(user, [
        'rollout',
        'create',
        'acme-welcome@1.0.0',
        '--query',
        `health.versionCode=${code}`,
        '--continuous',
      ]);
      expect(created).toMatchObject({ state: 'RUNNING', continuous: true, targets: 0, joined: 0 });
      await report(await register(alice(), 'acme', `acme-cont-cli-${RUN}`), health(code));
      await eventually(async () => (await readRollout(alice(), 'acme', created.id)).joined === 1, 'the device joined');
      const get = await runDss(user, ['rollout', 'get', created.id]);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout).toMatch(/│ continuous +│ yes, 1 device\(s\) joined since creation/);
      expect((await runDss(user, ['rollout', 'cancel', created.id])).code).toBe(0);
      const ids = await runDss(user, ['rollout', 'create', 'acme-welcome@1.0.0', '--devices', 'acme-kiosk-0001', '--continuous']);
      expect(ids.code).not.toBe(0);
      expect(ids.stderr).toContain('continuous');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 90_000);
});
