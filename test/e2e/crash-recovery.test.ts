/**
 * A crash at any moment loses nothing and duplicates nothing: the runtime is killed (SIGKILL, no chance to clean up)
 * in the middle of a 5,000-entry deployment request, restarted on the same data folder, and then every active
 * deployment has exactly one history entry and exactly one DeploymentChanged event, and nothing else has any.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { DEPLOYMENT_SHARDS } from '../../functions/adapters/aws/tables.js';
import { fleetDeviceId, fleetDevices, localDocumentClient, seedDevices } from './fleet.js';
import { clientFor, dynamoDbLocalStopped, eventually, isRunning, type LocalService, tokenFor, useLocalService } from './harness.js';

const ENTRIES = 5_000;
const LABEL = 'crash';

const local = useLocalService({ ownDynamoDbPort: true, hookTimeoutMs: 180_000 });

/** Ids of the active deployments of the crash devices, read straight from the table's shards (undeployed slots excluded). */
async function activeIds(): Promise<string[]> {
  const client = localDocumentClient(local.dynamoDbEndpoint, 4);
  const ids: string[] = [];
  for (let shard = 0; shard < DEPLOYMENT_SHARDS; shard += 1) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: 'deployments',
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'attribute_not_exists(undeploy)',
          ExpressionAttributeValues: { ':pk': `ACTIVE#acme#${shard}`, ':prefix': `acme-${LABEL}-` },
          ExclusiveStartKey: startKey,
        }),
      );
      ids.push(...(page.Items ?? []).map((item) => item.id as string));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  }
  client.destroy();
  return ids;
}

describe('a runtime killed during a 5,000-entry deployment', () => {
  it('ends, after a restart on the same data, with exactly one history entry and one event per change made', async () => {
    const client = localDocumentClient(local.dynamoDbEndpoint);
    await seedDevices(client, fleetDevices('acme', 'ACM', LABEL, ENTRIES));
    client.destroy();
    const running = local.service as LocalService;
    const token = await tokenFor(running, 'alice');
    const requests = Array.from({ length: ENTRIES }, (_, index) => ({
      target: { type: 'DEVICE', id: fleetDeviceId('acme', LABEL, index + 1), subId: null },
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' },
      action: 'DEPLOY' as const,
    }));
    const pending = clientFor(running, token)
      .main.POST('/companies/{companyId}/resources/deployments', {
        params: { path: { companyId: 'acme' } },
        body: { note: 'crash test', requests },
      })
      .catch((error: unknown) => error);

    // Kill it once a fair share of the writes is made, so some changes have their history and events and some not.
    // Counted once a second: a tighter loop would slow the very writes it waits for.
    await eventually(async () => (await activeIds()).length >= 800, '800 writes of the request', 180_000, 1_000);
    process.kill(running.pid, 'SIGKILL');
    const interrupted = await pending;
    expect(interrupted, 'the client saw the connection die').toBeInstanceOf(Error);
    await dynamoDbLocalStopped(local.dynamoDbPort);
    await running.stop();
    expect(isRunning(running.pid)).toBe(false);
    const beforeRestart = await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => '');

    const restarted = await local.restart();
    const active = await activeIds();
    expect(active.length).toBeGreaterThanOrEqual(800);
    expect(active.length).toBeLessThan(ENTRIES);

    /** One page of the history of acme-welcome 1.0.0 on the restarted service. */
    const historyPage = async (cursor: string | null) =>
      expectOk(
        await clientFor(restarted, await tokenFor(restarted, 'alice')).main.GET('/companies/{companyId}/resources/deployments/history', {
          params: {
            path: { companyId: 'acme' },
            query: { scenarioId: 'acme-welcome', version: '1.0.0', limit: 1000, ...(cursor === null ? {} : { cursor }) },
          },
        }),
      );
    const historyIds = async (): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await historyPage(cursor);
        ids.push(...page.items.filter((item) => item.target.id.startsWith(`acme-${LABEL}-`)).map((item) => item.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      return ids;
    };
    const eventIds = async (): Promise<string[]> =>
      (await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line.includes(`"acme-${LABEL}-`) && line.includes('"type":"DeploymentChanged"'))
        .map((line) => (JSON.parse(line) as { deploymentId: string }).deploymentId);

    await eventually(
      async () => (await historyIds()).length === active.length && (await eventIds()).length >= active.length,
      'history and events of every change',
      120_000,
    );
    const history = await historyIds();
    const events = await eventIds();
    const eventsBefore = beforeRestart
      .split('\n')
      .filter((line) => line.includes(`"acme-${LABEL}-`) && line.includes('"type":"DeploymentChanged"')).length;
    console.log(
      `crash recovery: ${active.length} active deployments; before the restart ${eventsBefore} events; after it ${history.length} history entries and ${events.length} events`,
    );
    expect(new Set(history).size, 'no duplicate history entry').toBe(history.length);
    expect(new Set(events).size, 'no duplicate event').toBe(events.length);
    expect([...history].sort()).toEqual([...active].sort());
    expect([...events].sort()).toEqual([...active].sort());
  }, 420_000);
});
