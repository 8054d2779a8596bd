import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deploymentSlotFromItem } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { LocalEventBus } from '../../../functions/adapters/embedded/local-event-bus.js';
import {
  applyDeploymentChanges,
  deploymentChangeOf,
  deploymentEventId,
  devicesWithNewDesiredState,
} from '../../../functions/core/deployments/changes.js';
import type {
  DeploymentChangedEvent,
  DeploymentEvent,
  DeploymentHistoryEntry,
  DeploymentSlot,
  HistoryEntry,
} from '../../../functions/core/deployments/model.js';
import type { StoredDevice } from '../../../functions/core/devices/model.js';

const active: DeploymentSlot = {
  id: '01JDEPLOY000000000000000000',
  company: 'acme',
  deviceId: 'acme-kiosk-0001',
  scenarioId: 'acme-welcome',
  version: '1.0.0',
  deployedAt: '2026-11-22T10:00:00.000Z',
  deployedBy: 'alice',
  note: 'spring',
};
const undeployed: DeploymentSlot = {
  ...active,
  undeploy: { id: '01JUNDEPLOY0000000000000000', at: '2026-11-22T11:00:00.000Z', by: 'bob' },
};

describe('deploymentChangeOf', () => {
  it('a slot put where none was is a DEPLOY with the id, instant, caller and note of the write', () => {
    expect(deploymentChangeOf(undefined, active)).toEqual({
      entry: {
        id: active.id,
        company: 'acme',
        deviceId: 'acme-kiosk-0001',
        deviceSubId: null,
        targetType: 'DEVICE',
        whatType: 'SCENARIO',
        scenarioId: 'acme-welcome',
        version: '1.0.0',
        action: 'DEPLOY',
        state: 'SUCCESS',
        cause: null,
        at: active.deployedAt,
        by: 'alice',
        note: 'spring',
      },
      event: {
        type: 'DeploymentChanged',
        company: 'acme',
        deploymentId: active.id,
        action: 'DEPLOY',
        deviceId: 'acme-kiosk-0001',
        scenarioId: 'acme-welcome',
        version: '1.0.0',
        at: active.deployedAt,
        by: 'alice',
        note: 'spring',
      },
    });
  });

  it('an active slot marked undeployed is an UNDEPLOY by whoever marked it (not the deployer), with the slot to purge', () => {
    const change = deploymentChangeOf(active, undeployed);
    expect(change?.entry).toMatchObject({
      id: undeployed.undeploy?.id,
      action: 'UNDEPLOY',
      at: '2026-11-22T11:00:00.000Z',
      by: 'bob',
      state: 'SUCCESS',
    });
    expect(change?.entry).not.toHaveProperty('note');
    expect(change?.event).toMatchObject({ deploymentId: undeployed.undeploy?.id, action: 'UNDEPLOY', by: 'bob', note: null });
    expect(change?.purge).toEqual({
      company: 'acme',
      deviceId: 'acme-kiosk-0001',
      scenarioId: 'acme-welcome',
      version: '1.0.0',
      undeployId: undeployed.undeploy?.id,
    });
  });

  it('a slot deployed again over an undeployed one is a DEPLOY of the new id', () => {
    const again = { ...active, id: '01JAGAIN0000000000000000000', deployedBy: 'carol' };
    expect(deploymentChangeOf(undeployed, again)?.entry).toMatchObject({ id: again.id, action: 'DEPLOY', by: 'carol' });
  });

  it('the purge of an undeployed slot, and items that are no slot, change nothing', () => {
    expect(deploymentChangeOf(undeployed, undefined)).toBeUndefined();
    expect(deploymentChangeOf(undefined, undefined)).toBeUndefined();
  });
});

describe('deploymentChangeOf: a slot moved to its shard by the storage migration', () => {
  // Stream images as the migration's transaction leaves them: the same slot put under its shard's key with
  // `movedFrom`, and the old key's item deleted.
  const oldItem = { ...active, pk: 'ACTIVE#acme', sk: 'acme-kiosk-0001#acme-welcome#1.0.0', entity: 'ACTIVE_DEPLOYMENT' };
  const movedItem = { ...oldItem, pk: 'ACTIVE#acme#8', movedFrom: 'ACTIVE#acme' };

  it('the put under the new key (no old image, the marker set) and the delete of the old key change nothing', () => {
    expect(deploymentSlotFromItem(movedItem)?.movedFrom).toBe('ACTIVE#acme');
    expect(deploymentChangeOf(undefined, deploymentSlotFromItem(movedItem))).toBeUndefined();
    expect(deploymentChangeOf(deploymentSlotFromItem(oldItem), undefined)).toBeUndefined();
    // Without the marker the same put is a DEPLOY: the marker is what tells them apart.
    expect(deploymentChangeOf(undefined, deploymentSlotFromItem(oldItem))?.entry).toMatchObject({ action: 'DEPLOY', id: active.id });
  });

  it('a moved slot goes on as any other: its undeploy, status reports and a deploy over it are changes', () => {
    const moved = deploymentSlotFromItem(movedItem) as DeploymentSlot;
    const undeploy = { id: '01JUNDEPLOY0000000000000001', at: '2026-11-23T11:00:00.000Z', by: 'bob' };
    expect(deploymentChangeOf(moved, { ...moved, undeploy })).toMatchObject({ entry: { action: 'UNDEPLOY', id: undeploy.id } });
    const status = { id: '01JSTATUS000000000000000001', state: 'INSTALLED' as const, updated: '2026-11-23T10:00:00.000Z' };
    expect(deploymentChangeOf(moved, { ...moved, deviceStatus: status })?.entry).toMatchObject({ kind: 'DEVICE_STATUS', id: status.id });
    const again = deploymentSlotFromItem({ ...oldItem, pk: 'ACTIVE#acme#8', id: '01JDEPLOY000000000000000002' });
    expect(deploymentChangeOf({ ...moved, undeploy }, again)?.entry).toMatchObject({ action: 'DEPLOY', id: '01JDEPLOY000000000000000002' });
  });
});

describe('deploymentChangeOf: status reports', () => {
  const reported: DeploymentSlot = {
    ...active,
    deviceStatus: { id: '01JSTATUS000000000000000001', state: 'FAILED', message: 'disk full', updated: '2026-11-22T10:30:00.000Z' },
  };

  it('an active slot whose deviceStatus.id changed gives a DEVICE_STATUS entry by the device and a DeploymentStatusChanged event', () => {
    expect(deploymentChangeOf(active, reported)).toEqual({
      entry: {
        kind: 'DEVICE_STATUS',
        id: '01JSTATUS000000000000000001',
        company: 'acme',
        deviceId: 'acme-kiosk-0001',
        deviceSubId: null,
        targetType: 'DEVICE',
        whatType: 'SCENARIO',
        scenarioId: 'acme-welcome',
        version: '1.0.0',
        deploymentId: active.id,
        deviceStatus: { state: 'FAILED', message: 'disk full' },
        at: '2026-11-22T10:30:00.000Z',
        by: 'acme~acme-kiosk-0001',
      },
      event: {
        type: 'DeploymentStatusChanged',
        company: 'acme',
        statusId: '01JSTATUS000000000000000001',
        deploymentId: active.id,
        deviceId: 'acme-kiosk-0001',
        scenarioId: 'acme-welcome',
        version: '1.0.0',
        state: 'FAILED',
        message: 'disk full',
        at: '2026-11-22T10:30:00.000Z',
        by: 'acme~acme-kiosk-0001',
      },
    });
  });

  it('a later report is a new entry; the same report seen again, or an undeploy of a reported slot, is no status change', () => {
    const later: DeploymentSlot = {
      ...reported,
      deviceStatus: { id: '01JSTATUS000000000000000002', state: 'INSTALLED', updated: '2026-11-22T10:40:00.000Z' },
    };
    const change = deploymentChangeOf(reported, later);
    expect(change?.entry).toMatchObject({ kind: 'DEVICE_STATUS', id: '01JSTATUS000000000000000002', deviceStatus: { state: 'INSTALLED' } });
    expect(change?.entry).not.toHaveProperty('deviceStatus.message');
    expect(change?.event).toMatchObject({ statusId: '01JSTATUS000000000000000002', message: null });
    expect(deploymentChangeOf(reported, { ...reported, note: 'edited' })).toBeUndefined();
    const undeployedAfterReport = {
      ...reported,
      undeploy: { id: '01JUNDEPLOY0000000000000000', at: '2026-11-22T11:00:00.000Z', by: 'bob' },
    };
    expect(deploymentChangeOf(reported, undeployedAfterReport)?.entry).toMatchObject({ action: 'UNDEPLOY' });
  });

  it('a batch delivered twice leaves one entry per report and one event per report, also across a restart of the bus', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dss-status-'));
    try {
      const file = join(directory, 'events.jsonl');
      const history = new Map<string, HistoryEntry>();
      const deployments = {
        recordHistory: async (entries: readonly HistoryEntry[]) => {
          for (const entry of entries) history.set(entry.id, entry);
        },
        purgeUndeployed: async () => undefined,
      };
      const later: DeploymentSlot = {
        ...reported,
        deviceStatus: { id: '01JSTATUS000000000000000002', state: 'INSTALLED', updated: '2026-11-22T10:40:00.000Z' },
      };
      // Two reports on one deployment: both events carry its deploymentId, each its own statusId.
      const batch = [
        deploymentChangeOf(undefined, active),
        deploymentChangeOf(active, reported),
        deploymentChangeOf(reported, later),
      ].flatMap((change) => change ?? []);
      const heard: string[] = [];
      const bus = new LocalEventBus(file);
      bus.on('DeploymentStatusChanged', (event: DeploymentEvent) =>
        heard.push(event.type === 'DeploymentStatusChanged' ? event.statusId : ''),
      );
      await applyDeploymentChanges({ deployments, events: bus }, batch);
      await applyDeploymentChanges({ deployments, events: bus }, batch);
      await applyDeploymentChanges({ deployments, events: new LocalEventBus(file) }, batch);
      expect([...history.keys()].sort()).toEqual([active.id, '01JSTATUS000000000000000001', '01JSTATUS000000000000000002'].sort());
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as DeploymentEvent);
      expect(lines.map((event) => `${event.type} ${deploymentEventId(event)}`)).toEqual([
        `DeploymentChanged ${active.id}`,
        'DeploymentStatusChanged 01JSTATUS000000000000000001',
        'DeploymentStatusChanged 01JSTATUS000000000000000002',
      ]);
      expect(heard).toEqual(['01JSTATUS000000000000000001', '01JSTATUS000000000000000002']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('applyDeploymentChanges', () => {
  it('applied again after the bus failed, leaves one history entry and one event per change', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dss-changes-'));
    try {
      const history = new Map<string, DeploymentHistoryEntry>();
      const purged: string[] = [];
      const bus = new LocalEventBus(join(directory, 'events.jsonl'));
      let failNext = true;
      const events = {
        publish: async (batch: readonly DeploymentChangedEvent[]) => {
          await bus.publish(batch.slice(0, 1));
          if (failNext) {
            failNext = false;
            throw new Error('bus down after the first event');
          }
          await bus.publish(batch);
        },
      };
      const deployments = {
        recordHistory: async (entries: readonly DeploymentHistoryEntry[]) => {
          for (const entry of entries) history.set(entry.id, entry);
        },
        purgeUndeployed: async (slots: readonly { undeployId: string }[]) => {
          purged.push(...slots.map((slot) => slot.undeployId));
        },
      };
      const changes = [deploymentChangeOf(undefined, active), deploymentChangeOf(active, undeployed)].flatMap((change) => change ?? []);
      await expect(applyDeploymentChanges({ deployments, events }, changes)).rejects.toThrow('bus down');
      expect(purged, 'nothing purged before the events are out').toEqual([]);
      await applyDeploymentChanges({ deployments, events }, changes);
      expect([...history.keys()]).toEqual([active.id, undeployed.undeploy?.id]);
      const lines = (await readFile(join(directory, 'events.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).deploymentId);
      expect(lines).toEqual([active.id, undeployed.undeploy?.id]);
      expect(purged).toEqual([undeployed.undeploy?.id]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('applyDeploymentChanges: the desired state tags', () => {
  it('refreshes the tag of each device whose deployments changed, once per batch, and not for status reports', async () => {
    const reported: DeploymentSlot = {
      ...active,
      deviceId: 'acme-kiosk-0002',
      deviceStatus: { id: '01JSTATUS000000000000000009', state: 'INSTALLED', updated: '2026-11-22T10:30:00.000Z' },
    };
    const changes = [
      deploymentChangeOf(undefined, active),
      deploymentChangeOf(active, undeployed),
      deploymentChangeOf({ ...reported, deviceStatus: undefined }, reported),
      deploymentChangeOf(undefined, { ...active, deviceId: 'acme-kiosk-0003', id: '01JDEPLOY000000000000000003' }),
    ].flatMap((change) => change ?? []);
    expect(devicesWithNewDesiredState(changes)).toEqual([
      { company: 'acme', deviceId: 'acme-kiosk-0001' },
      { company: 'acme', deviceId: 'acme-kiosk-0003' },
    ]);
    const written: string[] = [];
    const desiredStates = {
      devices: {
        get: async (company: string, deviceId: string) =>
          ({ id: deviceId, company, serial: 's', created: '', updated: '', connection: { state: 'UNKNOWN' } }) as StoredDevice,
        setDesiredState: async (_company: string, deviceId: string) => {
          written.push(deviceId);
          return 'written' as const;
        },
      },
      deployments: { activeOnDevice: async () => [] },
      commands: { pending: async () => [] },
    };
    const deployments = { recordHistory: async () => undefined, purgeUndeployed: async () => undefined };
    await applyDeploymentChanges({ deployments, events: { publish: async () => undefined }, desiredStates }, changes);
    expect(written).toEqual(['acme-kiosk-0001', 'acme-kiosk-0003']);
  });

  it('throws when a tag could not be refreshed, after the history and events are out, so that the batch is retried', async () => {
    const published: string[] = [];
    const desiredStates = {
      devices: {
        get: async () => {
          throw new Error('devices table unreachable');
        },
        setDesiredState: async () => 'written' as const,
      },
      deployments: { activeOnDevice: async () => [] },
      commands: { pending: async () => [] },
    };
    const deployments = { recordHistory: async () => undefined, purgeUndeployed: async () => undefined };
    const events = {
      publish: async (batch: readonly DeploymentEvent[]) => {
        published.push(...batch.map((event) => event.type));
      },
    };
    const changes = [deploymentChangeOf(undefined, active)].flatMap((change) => change ?? []);
    await expect(applyDeploymentChanges({ deployments, events, desiredStates }, changes)).rejects.toThrow('devices table unreachable');
    expect(published).toEqual(['DeploymentChanged']);
  });
});

describe('LocalEventBus', () => {
  it('does not append an event whose deploymentId the file already holds, across restarts, and mends a torn last line', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'dss-bus-'));
    try {
      const file = join(directory, 'events.jsonl');
      const event = deploymentChangeOf(undefined, active)?.event as DeploymentChangedEvent;
      // A previous process was killed while appending a second event.
      await writeFile(file, `${JSON.stringify(event)}\n{"type":"DeploymentChanged","deploymentId":"01JTO`);
      const heard: string[] = [];
      const bus = new LocalEventBus(file);
      bus.on('DeploymentChanged', (published: DeploymentChangedEvent) => heard.push(published.deploymentId));
      const other = { ...event, deploymentId: '01JOTHER000000000000000000' };
      await Promise.all([bus.publish([event, other]), bus.publish([other])]);
      const lines = (await readFile(file, 'utf8')).split('\n');
      expect(lines.filter((line) => line.startsWith('{') && line.endsWith('}')).map((line) => JSON.parse(line).deploymentId)).toEqual([
        event.deploymentId,
        other.deploymentId,
      ]);
      expect(heard).toEqual([other.deploymentId]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
