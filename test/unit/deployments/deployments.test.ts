import { describe, expect, it } from 'vitest';
import { deploymentsExecute, deploymentsListAll } from '../../../functions/contract/routes/deployments.js';
import {
  type DeploymentDependencies,
  type DeploymentResultItem,
  executeDeployments,
  listActiveDeployments,
} from '../../../functions/core/deployments/deployments.js';
import type {
  ActiveDeployment,
  DeploymentHistoryEntry,
  DeviceSlot,
  DeviceStatus,
  UndeployMark,
} from '../../../functions/core/deployments/model.js';
import type { DeploymentRepository } from '../../../functions/core/deployments/ports.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import type { ScenarioRepository } from '../../../functions/core/scenarios/ports.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../../functions/core/shared/errors.js';
import type { Page } from '../../../functions/core/shared/paging.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { bodyOf, queryOf } from '../../support/route-input.js';

// ---------------------------------------------------------------------------------------------------------------
// In-memory fakes of the ports
// ---------------------------------------------------------------------------------------------------------------

class FakeDevices implements DeviceRepository {
  readonly calls: { companyId: string; deviceIds: string[] }[] = [];
  constructor(private readonly byCompany: Record<string, string[]>) {}
  async existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>> {
    this.calls.push({ companyId, deviceIds: [...deviceIds] });
    const known = new Set(this.byCompany[companyId] ?? []);
    return new Set(deviceIds.filter((id) => known.has(id)));
  }
  async put(): Promise<void> {
    throw new Error('not used');
  }
  async get(): Promise<never> {
    throw new Error('not used');
  }
  async recordHealth(): Promise<never> {
    throw new Error('not used');
  }
  async create(): Promise<never> {
    throw new Error('not used');
  }
  async update(): Promise<never> {
    throw new Error('not used');
  }
  async setCredential(): Promise<never> {
    throw new Error('not used');
  }
  async markDeleting(): Promise<never> {
    throw new Error('not used');
  }
  async remove(): Promise<never> {
    throw new Error('not used');
  }
  async setDesiredState(): Promise<never> {
    throw new Error('not used');
  }
}

class FakeScenarios implements ScenarioRepository {
  readonly calls: { companyId: string; references: { scenarioId: string; version: string }[] }[] = [];
  /** company → `scenarioId#version` */
  constructor(private readonly byCompany: Record<string, string[]>) {}
  async recordVersion(): Promise<never> {
    throw new Error('not used');
  }
  async stageArchive(): Promise<never> {
    throw new Error('not used');
  }
  async discardStagedArchive(): Promise<never> {
    throw new Error('not used');
  }
  async abandonStagedArchive(): Promise<never> {
    throw new Error('not used');
  }
  async overdueStagedArchives(): Promise<never> {
    throw new Error('not used');
  }
  async existingVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<Set<string>> {
    this.calls.push({ companyId, references: [...references] });
    const known = new Set(this.byCompany[companyId] ?? []);
    return new Set(references.map((r) => `${r.scenarioId}#${r.version}`).filter((key) => known.has(key)));
  }
}

/** A deployment table in a Map; each call is atomic (no await between check and write). */
class FakeDeployments implements DeploymentRepository {
  readonly active = new Map<string, ActiveDeployment>();
  readonly history: DeploymentHistoryEntry[] = [];
  readonly recordHistoryCalls: DeploymentHistoryEntry[][] = [];
  /** Makes activate/deactivate throw for matching identities. */
  failWhen: (identity: { deviceId: string; scenarioId: string; version: string }) => boolean = () => false;
  failRecordHistory = false;

  static key(identity: { company: string; deviceId: string; scenarioId: string; version: string }): string {
    return [identity.company, identity.deviceId, identity.scenarioId, identity.version].join('#');
  }

  async activeAmong(
    companyId: string,
    identities: readonly { deviceId: string; scenarioId: string; version: string }[],
  ): Promise<Set<string>> {
    return new Set(
      identities
        .filter((identity) => this.active.has(FakeDeployments.key({ company: companyId, ...identity })))
        .map((identity) => `${identity.deviceId}#${identity.scenarioId}#${identity.version}`),
    );
  }

  async activate(deployment: ActiveDeployment): Promise<'activated' | 'already-active'> {
    if (this.failWhen(deployment)) throw new Error('simulated backend failure');
    const key = FakeDeployments.key(deployment);
    if (this.active.has(key)) return 'already-active';
    this.active.set(key, deployment);
    return 'activated';
  }

  readonly undeployMarks: UndeployMark[] = [];
  async deactivate(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    undeploy: UndeployMark,
  ): Promise<'deactivated' | 'already-inactive'> {
    if (this.failWhen(identity)) throw new Error('simulated backend failure');
    const key = FakeDeployments.key(identity);
    if (!this.active.delete(key)) return 'already-inactive';
    this.undeployMarks.push(undeploy);
    return 'deactivated';
  }

  async purgeUndeployed(): Promise<void> {
    throw new Error('not used by the request');
  }

  async recordHistory(entries: readonly DeploymentHistoryEntry[]): Promise<void> {
    if (this.failRecordHistory) throw new Error('history table down');
    this.recordHistoryCalls.push([...entries]);
    this.history.push(...entries);
  }

  async activeOnDevice(companyId: string, deviceId: string): Promise<DeviceSlot[]> {
    return [...this.active.values()]
      .filter((d) => d.company === companyId && d.deviceId === deviceId)
      .sort((a, b) => FakeDeployments.key(a).localeCompare(FakeDeployments.key(b)))
      .map(({ id, scenarioId, version, deployedAt, deviceStatus }) => ({
        id,
        scenarioId,
        version,
        deployedAt,
        ...(deviceStatus === undefined ? {} : { deviceStatus }),
      }));
  }

  async recordDeviceStatus(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    status: DeviceStatus,
  ): Promise<boolean> {
    const found = this.active.get(FakeDeployments.key(identity));
    if (found === undefined) return false;
    this.active.set(FakeDeployments.key(identity), { ...found, deviceStatus: status });
    return true;
  }

  readonly listCalls: { companyId: string; deviceId: string | undefined; limit: number; cursor: string | undefined }[] = [];
  async listActive(
    companyId: string,
    deviceId: string | undefined,
    limit: number,
    cursor: string | undefined,
  ): Promise<Page<ActiveDeployment>> {
    this.listCalls.push({ companyId, deviceId, limit, cursor });
    const items = [...this.active.values()]
      .filter((d) => d.company === companyId && (deviceId === undefined || d.deviceId === deviceId))
      .sort((a, b) => FakeDeployments.key(a).localeCompare(FakeDeployments.key(b)));
    const start = cursor === undefined ? 0 : Number(cursor);
    const page = items.slice(start, start + limit);
    return { items: page, nextCursor: start + limit < items.length ? String(start + limit) : null };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------------

const alice: Principal = {
  subject: 'alice',
  companies: ['acme'],
  scopes: new Set(['deployments:read', 'deployments:write']),
};

interface World {
  devices: FakeDevices;
  scenarios: FakeScenarios;
  deployments: FakeDeployments;
  errors: { error: unknown; context: Record<string, unknown> }[];
  dependencies: DeploymentDependencies;
}

const NOW = new Date('2025-03-04T05:06:07.000Z');

function world(): World {
  const devices = new FakeDevices({ acme: ['kiosk-1', 'kiosk-2', 'kiosk-3'], globex: ['globex-kiosk-1'] });
  const scenarios = new FakeScenarios({ acme: ['lobby#1.0.0', 'lobby#1.1.0', 'menu#2.0.0'], globex: ['transit#1.0.0'] });
  const deployments = new FakeDeployments();
  const errors: World['errors'] = [];
  return {
    devices,
    scenarios,
    deployments,
    errors,
    dependencies: { devices, scenarios, deployments, now: () => NOW, onError: (error, context) => errors.push({ error, context }) },
  };
}

type Entry = {
  target: { type: string; id: string; subId?: string | null };
  what: { type: string; id: string; subId: string };
  action: string;
};

function entry(deviceId: string, scenario: string, version: string, action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY'): Entry {
  return { target: { type: 'DEVICE', id: deviceId, subId: null }, what: { type: 'SCENARIO', id: scenario, subId: version }, action };
}

function outcomes(items: DeploymentResultItem[]): [string, string | null][] {
  return items.map((item) => [item.state, item.cause]);
}

async function run(w: World, requests: Entry[], note?: string, principal: Principal = alice, company = 'acme') {
  return execute(w.dependencies, principal, company, { requests, ...(note === undefined ? {} : { note }) });
}

/** The route's validation of the query string, then the use case: what the handler does. */
async function list(
  dependencies: World['dependencies'],
  principal: Principal,
  company: string,
  deviceId: string | undefined,
  pairs: [string, string][],
) {
  return listActiveDeployments(dependencies, principal, company, deviceId, queryOf(deploymentsListAll, pairs));
}

/** The route's validation of the body, then the use case: what the handler does. */
async function execute(dependencies: World['dependencies'], principal: Principal, company: string, body: unknown) {
  return executeDeployments(dependencies, principal, company, bodyOf(deploymentsExecute, body));
}

async function badRequestPaths(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as BadRequestError).violations.map((v) => v.path);
  }
  throw new Error('expected a 400');
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

// ---------------------------------------------------------------------------------------------------------------
// executeDeployments
// ---------------------------------------------------------------------------------------------------------------

describe('executeDeployments', () => {
  it('deploys and reports SUCCESS with cause null, echoing target and what (subId null for a device)', async () => {
    const w = world();
    const { items } = await run(w, [{ ...entry('kiosk-1', 'lobby', '1.0.0'), target: { type: 'DEVICE', id: 'kiosk-1' } }]);
    expect(items).toEqual([
      {
        id: expect.stringMatching(ULID),
        target: { type: 'DEVICE', id: 'kiosk-1', subId: null },
        what: { type: 'SCENARIO', id: 'lobby', subId: '1.0.0' },
        action: 'DEPLOY',
        state: 'SUCCESS',
        cause: null,
      },
    ]);
    expect([...w.deployments.active.values()]).toEqual([
      {
        id: items[0]?.id,
        company: 'acme',
        deviceId: 'kiosk-1',
        scenarioId: 'lobby',
        version: '1.0.0',
        deployedAt: NOW.toISOString(),
        deployedBy: 'alice',
      },
    ]);
  });

  it('applies cause precedence NOT_IMPLEMENTED > TARGET_NOT_FOUND > WHAT_NOT_FOUND', async () => {
    const w = world();
    const { items } = await run(w, [
      // unsupported target type on an unknown device with an unknown scenario: NOT_IMPLEMENTED wins
      { target: { type: 'ROOM', id: 'nowhere' }, what: { type: 'SCENARIO', id: 'ghost', subId: '9.9.9' }, action: 'DEPLOY' },
      // unsupported what type: NOT_IMPLEMENTED wins over the unknown device
      { target: { type: 'DEVICE', id: 'nowhere' }, what: { type: 'FIRMWARE', id: 'ghost', subId: '9.9.9' }, action: 'DEPLOY' },
      // a device sub-target is not implemented either
      {
        target: { type: 'DEVICE', id: 'kiosk-1', subId: 'printer' },
        what: { type: 'SCENARIO', id: 'lobby', subId: '1.0.0' },
        action: 'DEPLOY',
      },
      // unknown device and unknown scenario: TARGET_NOT_FOUND wins
      entry('nowhere', 'ghost', '9.9.9'),
      // known device, unknown scenario / unknown version
      entry('kiosk-1', 'ghost', '1.0.0'),
      entry('kiosk-1', 'lobby', '9.9.9', 'UNDEPLOY'),
    ]);
    expect(outcomes(items)).toEqual([
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
    ]);
    expect(w.deployments.active.size).toBe(0);
  });

  it('reports TARGET_NOT_FOUND for a device of another company (its existence is not revealed)', async () => {
    const w = world();
    const { items } = await run(w, [entry('globex-kiosk-1', 'lobby', '1.0.0')]);
    expect(outcomes(items)).toEqual([['FAILURE', 'TARGET_NOT_FOUND']]);
  });

  it('reports WHAT_NOT_FOUND for a scenario of another company', async () => {
    const w = world();
    const { items } = await run(w, [entry('kiosk-1', 'transit', '1.0.0')]);
    expect(outcomes(items)).toEqual([['FAILURE', 'WHAT_NOT_FOUND']]);
  });

  it('reports malformed identifiers as not found without asking the repositories about them', async () => {
    const w = world();
    const { items } = await run(w, [entry('bad/id', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.0.0#x')]);
    expect(outcomes(items)).toEqual([
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
    ]);
    expect(w.devices.calls.flatMap((c) => c.deviceIds)).not.toContain('bad/id');
    expect(w.scenarios.calls.flatMap((c) => c.references).map((r) => r.version)).not.toContain('1.0.0#x');
  });

  it('keeps request order and gives one item per entry', async () => {
    const w = world();
    const requests = [
      entry('kiosk-3', 'menu', '2.0.0'),
      entry('nowhere', 'lobby', '1.0.0'),
      entry('kiosk-1', 'lobby', '1.1.0'),
      entry('kiosk-2', 'lobby', '1.0.0', 'UNDEPLOY'),
      entry('kiosk-1', 'lobby', '1.0.0'),
    ];
    const { items } = await run(w, requests);
    expect(items.map((i) => [i.target.id, i.what.id, i.what.subId, i.action])).toEqual(
      requests.map((r) => [r.target.id, r.what.id, r.what.subId, r.action]),
    );
    expect(outcomes(items)).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_UNDEPLOYED'],
      ['SUCCESS', null],
    ]);
  });

  it('keeps several versions of one scenario active on one device', async () => {
    const w = world();
    const { items } = await run(w, [entry('kiosk-1', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.1.0')]);
    expect(outcomes(items)).toEqual([
      ['SUCCESS', null],
      ['SUCCESS', null],
    ]);
    expect(w.deployments.active.size).toBe(2);
  });

  it('runs duplicate entries of one request in order: DEPLOY, DEPLOY → SUCCESS, ALREADY_DEPLOYED', async () => {
    const w = world();
    const { items } = await run(w, [entry('kiosk-1', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.0.0')]);
    expect(outcomes(items)).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_DEPLOYED'],
    ]);
    // the stored deployment is the first item's
    expect([...w.deployments.active.values()][0]?.id).toBe(items[0]?.id);
  });

  it('runs DEPLOY, UNDEPLOY, UNDEPLOY in order → SUCCESS, SUCCESS, ALREADY_UNDEPLOYED', async () => {
    const w = world();
    const { items } = await run(w, [
      entry('kiosk-1', 'lobby', '1.0.0', 'DEPLOY'),
      entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY'),
      entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY'),
    ]);
    expect(outcomes(items)).toEqual([
      ['SUCCESS', null],
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_UNDEPLOYED'],
    ]);
    expect(w.deployments.active.size).toBe(0);
  });

  it('sees deployments made by earlier requests', async () => {
    const w = world();
    await run(w, [entry('kiosk-1', 'lobby', '1.0.0')]);
    expect(outcomes((await run(w, [entry('kiosk-1', 'lobby', '1.0.0')])).items)).toEqual([['FAILURE', 'ALREADY_DEPLOYED']]);
    expect(outcomes((await run(w, [entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY')])).items)).toEqual([['SUCCESS', null]]);
  });

  it('reports FAILURE / NONE for an item whose write throws, calls onError, and leaves the other items unaffected', async () => {
    const w = world();
    w.deployments.failWhen = (identity) => identity.deviceId === 'kiosk-2';
    const { items } = await run(w, [
      entry('kiosk-1', 'lobby', '1.0.0'),
      entry('kiosk-2', 'lobby', '1.0.0'),
      entry('kiosk-3', 'lobby', '1.0.0'),
      entry('kiosk-2', 'menu', '2.0.0', 'UNDEPLOY'),
    ]);
    expect(outcomes(items)).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'NONE'],
      ['SUCCESS', null],
      ['FAILURE', 'NONE'],
    ]);
    expect(w.errors).toHaveLength(2);
    expect(w.errors[0]?.error).toBeInstanceOf(Error);
    expect(w.errors.map((e) => e.context.deploymentId).sort()).toEqual([items[1]?.id, items[3]?.id].sort());
    expect(w.errors.map((e) => e.context.deviceId)).toEqual(['kiosk-2', 'kiosk-2']);
    expect([...w.deployments.active.values()].map((d) => d.deviceId).sort()).toEqual(['kiosk-1', 'kiosk-3']);
  });

  it('continues with later duplicates after a throwing write', async () => {
    const w = world();
    let calls = 0;
    w.deployments.failWhen = () => {
      calls += 1;
      return calls === 1;
    };
    const { items } = await run(w, [entry('kiosk-1', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.0.0')]);
    expect(outcomes(items)).toEqual([
      ['FAILURE', 'NONE'],
      ['SUCCESS', null],
    ]);
  });

  it('batches existence lookups: one device lookup and one version lookup per request, with unique ids', async () => {
    const w = world();
    await run(w, [
      entry('kiosk-1', 'lobby', '1.0.0'),
      entry('kiosk-1', 'lobby', '1.1.0'),
      entry('kiosk-2', 'lobby', '1.0.0'),
      entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY'),
      entry('nowhere', 'menu', '2.0.0'),
      { target: { type: 'ROOM', id: 'not-asked' }, what: { type: 'SCENARIO', id: 'lobby', subId: '1.0.0' }, action: 'DEPLOY' },
    ]);
    expect(w.devices.calls).toHaveLength(1);
    expect(w.devices.calls[0]?.companyId).toBe('acme');
    expect([...(w.devices.calls[0]?.deviceIds ?? [])].sort()).toEqual(['kiosk-1', 'kiosk-2', 'nowhere']);
    expect(w.scenarios.calls).toHaveLength(1);
    expect(w.scenarios.calls[0]?.companyId).toBe('acme');
    const keys = (w.scenarios.calls[0]?.references ?? []).map((r) => `${r.scenarioId}#${r.version}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual(['lobby#1.0.0', 'lobby#1.1.0', 'menu#2.0.0']);
  });

  it('appends the entries that changed nothing to history in one recordHistory call after the writes, in request order, with who, when, note and cause', async () => {
    const w = world();
    const { items } = await run(
      w,
      [entry('kiosk-1', 'lobby', '1.0.0'), entry('nowhere', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.0.0')],
      'spring campaign',
    );
    expect(w.deployments.recordHistoryCalls).toHaveLength(1);
    expect(w.deployments.recordHistoryCalls[0]).toEqual([
      {
        id: items[1]?.id,
        company: 'acme',
        deviceId: 'nowhere',
        deviceSubId: null,
        targetType: 'DEVICE',
        whatType: 'SCENARIO',
        scenarioId: 'lobby',
        version: '1.0.0',
        action: 'DEPLOY',
        state: 'FAILURE',
        cause: 'TARGET_NOT_FOUND',
        at: NOW.toISOString(),
        by: 'alice',
        note: 'spring campaign',
      },
      expect.objectContaining({ id: items[2]?.id, state: 'FAILURE', cause: 'ALREADY_DEPLOYED' }),
    ]);
    // The SUCCESS carries its history in the write itself: id, who, when and why on the active deployment.
    expect(w.deployments.active.values().next().value).toMatchObject({
      id: items[0]?.id,
      deployedBy: 'alice',
      deployedAt: NOW.toISOString(),
      note: 'spring campaign',
    });
  });

  it('reports a throwing write as FAILURE / NONE and logs it, but writes no history entry that could replace the one the stream derives if the write was made', async () => {
    const w = world();
    w.deployments.failWhen = () => true;
    const { items } = await run(w, [entry('kiosk-1', 'lobby', '1.0.0'), entry('nowhere', 'lobby', '1.0.0')]);
    expect(outcomes(items)).toEqual([
      ['FAILURE', 'NONE'],
      ['FAILURE', 'TARGET_NOT_FOUND'],
    ]);
    expect(w.deployments.recordHistoryCalls.flat().map((entry) => entry.id)).toEqual([items[1]?.id]);
    expect(w.errors[0]?.context).toMatchObject({ deploymentId: items[0]?.id, action: 'DEPLOY' });
  });

  it('an UNDEPLOY carries its id, caller, instant and note in its one write, and writes no history from the request', async () => {
    const w = world();
    await run(w, [entry('kiosk-1', 'lobby', '1.0.0')]);
    const { items } = await run(w, [entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY')], 'retired');
    expect(w.deployments.undeployMarks).toEqual([{ id: items[0]?.id, at: NOW.toISOString(), by: 'alice', note: 'retired' }]);
    expect(w.deployments.recordHistoryCalls).toEqual([]);
  });

  it('still answers truthfully when recordHistory throws, and hands the unwritten entries to onError', async () => {
    const w = world();
    w.deployments.failRecordHistory = true;
    const { items } = await run(w, [entry('nowhere', 'lobby', '1.0.0'), entry('kiosk-1', 'lobby', '1.0.0')]);
    expect(outcomes(items)).toEqual([
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['SUCCESS', null],
    ]);
    expect(w.deployments.active.size).toBe(1);
    expect(w.errors).toHaveLength(1);
    expect(w.errors[0]?.context).toMatchObject({ operation: 'recordHistory', count: 1 });
    expect((w.errors[0]?.context.entries as { id: string }[]).map((entry) => entry.id)).toEqual([items[0]?.id]);
  });

  it('gives every item a unique ULID, also across requests', async () => {
    const w = world();
    const first = await run(
      w,
      Array.from({ length: 50 }, (_, i) => entry(`kiosk-${(i % 3) + 1}`, 'lobby', '1.0.0')),
    );
    const second = await run(w, [entry('kiosk-1', 'menu', '2.0.0')]);
    const ids = [...first.items, ...second.items].map((i) => i.id);
    for (const id of ids) expect(id).toMatch(ULID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  describe('400 for a structurally invalid body, changing nothing', () => {
    it.each<[string, unknown, string[]]>([
      ['a non-object body', 'deploy please', ['/']],
      ['null', null, ['/']],
      ['a missing requests array', { note: 'x' }, ['/requests']],
      ['an empty requests array', { requests: [] }, ['/requests']],
      ['an unknown action', { requests: [{ ...entry('kiosk-1', 'lobby', '1.0.0'), action: 'REDEPLOY' }] }, ['/requests/0/action']],
      [
        'a missing target',
        { requests: [{ what: { type: 'SCENARIO', id: 'lobby', subId: '1.0.0' }, action: 'DEPLOY' }] },
        ['/requests/0/target'],
      ],
      [
        'a missing what.subId and an empty target.id',
        {
          requests: [
            entry('kiosk-1', 'lobby', '1.0.0'),
            { target: { type: 'DEVICE', id: '' }, what: { type: 'SCENARIO', id: 'lobby' }, action: 'DEPLOY' },
          ],
        },
        ['/requests/1/target/id', '/requests/1/what/subId'],
      ],
      ['a non-string note', { requests: [entry('kiosk-1', 'lobby', '1.0.0')], note: 42 }, ['/note']],
      ['a note over 2000 characters', { requests: [entry('kiosk-1', 'lobby', '1.0.0')], note: 'x'.repeat(2001) }, ['/note']],
    ])('%s', async (_label, body, expectedPaths) => {
      const w = world();
      const paths = await badRequestPaths(execute(w.dependencies, alice, 'acme', body));
      expect([...paths].sort()).toEqual([...expectedPaths].sort());
      expect(w.devices.calls).toHaveLength(0);
      expect(w.deployments.active.size).toBe(0);
      expect(w.deployments.history).toHaveLength(0);
    });

    it('refuses the whole request when one entry of many is invalid', async () => {
      const w = world();
      const body = { requests: [entry('kiosk-1', 'lobby', '1.0.0'), { ...entry('kiosk-2', 'lobby', '1.0.0'), action: 'deploy' }] };
      expect(await badRequestPaths(execute(w.dependencies, alice, 'acme', body))).toEqual(['/requests/1/action']);
      expect(w.deployments.active.size).toBe(0);
    });
  });

  describe('403', () => {
    it("for a company outside the token (the scope is the handler stack's check)", async () => {
      const w = world();
      await expect(
        execute(w.dependencies, alice, 'globex', { requests: [entry('globex-kiosk-1', 'transit', '1.0.0')] }),
      ).rejects.toBeInstanceOf(ForbiddenError);
      expect(w.devices.calls).toHaveLength(0);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// listActiveDeployments
// ---------------------------------------------------------------------------------------------------------------

describe('listActiveDeployments', () => {
  async function seeded(): Promise<World> {
    const w = world();
    await run(w, [entry('kiosk-1', 'lobby', '1.0.0'), entry('kiosk-2', 'menu', '2.0.0')], 'launch');
    await run(w, [entry('kiosk-1', 'lobby', '1.1.0')]);
    return w;
  }

  it('lists the active deployments of one device in the result-item shape plus deployedAt, deployedBy and note', async () => {
    const w = await seeded();
    const page = await list(w.dependencies, alice, 'acme', 'kiosk-1', []);
    expect(page.nextCursor).toBeNull();
    expect(page.items).toEqual([
      {
        id: expect.stringMatching(ULID),
        target: { type: 'DEVICE', id: 'kiosk-1', subId: null },
        what: { type: 'SCENARIO', id: 'lobby', subId: '1.0.0' },
        action: 'DEPLOY',
        state: 'SUCCESS',
        cause: null,
        deployedAt: NOW.toISOString(),
        deployedBy: 'alice',
        note: 'launch',
      },
      expect.objectContaining({ what: { type: 'SCENARIO', id: 'lobby', subId: '1.1.0' }, note: null }),
    ]);
  });

  it('lists every device of the company without a device id, and no longer lists undeployed ones', async () => {
    const w = await seeded();
    await run(w, [entry('kiosk-1', 'lobby', '1.0.0', 'UNDEPLOY')]);
    const page = await list(w.dependencies, alice, 'acme', undefined, []);
    expect(page.items.map((i) => `${i.target.id}/${i.what.id}@${i.what.subId}`)).toEqual(['kiosk-1/lobby@1.1.0', 'kiosk-2/menu@2.0.0']);
  });

  it('passes limit (default 100) and cursor to the repository and returns its nextCursor', async () => {
    const w = await seeded();
    const first = await list(w.dependencies, alice, 'acme', undefined, [['limit', '2']]);
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = await list(w.dependencies, alice, 'acme', undefined, [
      ['limit', '2'],
      ['cursor', first.nextCursor!],
    ]);
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    await list(w.dependencies, alice, 'acme', undefined, []);
    expect(w.deployments.listCalls.map((c) => c.limit)).toEqual([2, 2, 100]);
    expect(w.deployments.listCalls[1]?.cursor).toBe(first.nextCursor);
  });

  it('accepts limit=1000', async () => {
    const w = await seeded();
    await list(w.dependencies, alice, 'acme', undefined, [['limit', '1000']]);
    expect(w.deployments.listCalls[0]?.limit).toBe(1000);
  });

  it.each(['0', '1001', '-1', '10.5', 'ten', '', '0100'])('refuses limit=%j with 400', async (limit) => {
    const w = await seeded();
    expect(await badRequestPaths(list(w.dependencies, alice, 'acme', undefined, [['limit', limit]]))).toEqual(['limit']);
    expect(w.deployments.listCalls).toHaveLength(0);
  });

  it('refuses unknown parameters, all of them together with a bad limit', async () => {
    const w = await seeded();
    const paths = await badRequestPaths(
      list(w.dependencies, alice, 'acme', 'kiosk-1', [
        ['state', 'SUCCESS'],
        ['limit', 'x'],
        ['page', '2'],
      ]),
    );
    expect([...paths].sort()).toEqual(['limit', 'page', 'state']);
  });

  it('answers 404 for an unknown device, a malformed id and a device of another company', async () => {
    const w = await seeded();
    for (const deviceId of ['nowhere', 'bad/id', 'globex-kiosk-1']) {
      await expect(list(w.dependencies, alice, 'acme', deviceId, [])).rejects.toBeInstanceOf(NotFoundError);
    }
    expect(w.deployments.listCalls).toHaveLength(0);
  });

  it('answers 403 outside the token companies', async () => {
    const w = await seeded();
    await expect(list(w.dependencies, alice, 'globex', undefined, [])).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('returns an empty page for a device without deployments', async () => {
    const w = await seeded();
    expect(await list(w.dependencies, alice, 'acme', 'kiosk-3', [])).toEqual({ items: [], nextCursor: null });
  });
});
