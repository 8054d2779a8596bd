import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyDeploymentChanges, deploymentChangeOf } from '../../functions/core/deployment-changes.js';
import type { DeploymentChangedEvent, DeploymentHistoryEntry, DeploymentSlot } from '../../functions/core/ports.js';
import { LocalEventBus } from '../../functions/adapters/embedded/local-event-bus.js';

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
    expect(change?.entry.note).toBeUndefined();
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
