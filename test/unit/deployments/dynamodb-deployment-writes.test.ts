/**
 * DynamoDB failure modes of the deployment writes that DynamoDB Local cannot produce on demand (throttled batch
 * writes, refused conditions seen through the SDK's exception classes), simulated with aws-sdk-client-mock.
 */
import { randomBytes } from 'node:crypto';
import { type AttributeValue, ConditionalCheckFailedException, DynamoDBClient, InternalServerError } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DeleteCommand, DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import {
  DynamoDbDeploymentRepository,
  MAX_QUERIES_PER_MERGED_PAGE,
  MAX_QUERIES_PER_PAGE,
} from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import type { ActiveDeployment, DeploymentHistoryEntry } from '../../../functions/core/deployments/model.js';

const tables = {
  companies: 'companies',
  devices: 'devices',
  scenarios: 'scenarios',
  deployments: 'deployments',
  presence: 'presence',
  rollouts: 'rollouts',
  commands: 'commands',
};
const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
);
const mock = mockClient(documentClient);
/** Writes never page: any key. */
const cursors = new CursorCodec(() => randomBytes(32));
afterEach(() => mock.reset());

const deployment: ActiveDeployment = {
  id: '01JDEPLOY000000000000000000',
  company: 'acme',
  deviceId: 'acme-kiosk-0001',
  scenarioId: 'acme-welcome',
  version: '1.0.0',
  deployedAt: '2026-11-22T10:00:00.000Z',
  deployedBy: 'alice',
};
const historyEntry = (index: number): DeploymentHistoryEntry => ({
  id: `01JDEPLOY${String(index).padStart(17, '0')}`,
  company: 'acme',
  deviceId: `acme-kiosk-${index}`,
  deviceSubId: null,
  targetType: 'DEVICE',
  whatType: 'SCENARIO',
  scenarioId: 'acme-welcome',
  version: '1.0.0',
  action: 'DEPLOY',
  state: 'SUCCESS',
  cause: null,
  at: deployment.deployedAt,
  by: 'alice',
});
const refused = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('deployment writes on DynamoDB', () => {
  it("DEPLOY is one conditional put of the ACTIVE item in the device's shard; a refused condition means already active", async () => {
    mock.on(PutCommand).resolvesOnce({}).rejects(refused());
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    expect(await repository.activate(deployment)).toBe('activated');
    expect(await repository.activate(deployment)).toBe('already-active');
    const input = mock.commandCalls(PutCommand)[0]!.args[0].input;
    expect(input).toMatchObject({
      TableName: 'deployments',
      ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(undeploy)',
      // deploymentShardOf('acme-kiosk-0001') is 8.
      Item: { pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0', id: deployment.id, deployedBy: 'alice' },
    });
  });

  it('UNDEPLOY is one conditional update marking the slot with who, when and why; a refused condition means already inactive', async () => {
    mock.on(UpdateCommand).resolvesOnce({}).rejects(refused());
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    const undeploy = { id: '01JUNDEPLOY0000000000000000', at: '2026-11-22T11:00:00.000Z', by: 'bob', note: 'retired' };
    expect(await repository.deactivate(deployment, undeploy)).toBe('deactivated');
    expect(await repository.deactivate(deployment, undeploy)).toBe('already-inactive');
    expect(mock.commandCalls(UpdateCommand)[0]!.args[0].input).toMatchObject({
      Key: { pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0' },
      UpdateExpression: 'SET undeploy = :undeploy',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undeploy)',
      ExpressionAttributeValues: { ':undeploy': undeploy },
    });
    expect(mock.commandCalls(DeleteCommand)).toHaveLength(0);
  });

  it('a refusal that finds this very deployment or UNDEPLOY stored (a retried write whose answer was lost) counts as made', async () => {
    const undeploy = { id: '01JUNDEPLOY0000000000000000', at: '2026-11-22T11:00:00.000Z', by: 'bob' };
    const stored = marshall({ ...deployment, pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#acme-welcome#1.0.0', entity: 'ACTIVE_DEPLOYMENT' });
    const refusedFinding = (item: Record<string, AttributeValue>) => Object.assign(refused(), { Item: item });
    mock
      .on(PutCommand)
      .rejectsOnce(refusedFinding(stored))
      .rejectsOnce(refusedFinding(marshall({ ...unmarshall(stored), id: 'another' })));
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    expect(await repository.activate(deployment)).toBe('activated');
    expect(await repository.activate(deployment)).toBe('already-active');
    expect(mock.commandCalls(PutCommand)[0]!.args[0].input).toMatchObject({ ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    mock
      .on(UpdateCommand)
      .rejectsOnce(refusedFinding(marshall({ ...unmarshall(stored), undeploy })))
      .rejectsOnce(refusedFinding(marshall({ ...unmarshall(stored), undeploy: { ...undeploy, id: 'other' } })));
    expect(await repository.deactivate(deployment, undeploy)).toBe('deactivated');
    expect(await repository.deactivate(deployment, undeploy)).toBe('already-inactive');
  });

  it('a page of active deployments behind many undeployed slots takes at most a bounded number of queries, and goes on from a cursor', async () => {
    const active = (shard: number, n: number) => ({
      pk: `ACTIVE#acme#${shard}`,
      sk: `d${String(n).padStart(5, '0')}#s#1.0.0`,
      entity: 'ACTIVE_DEPLOYMENT',
      ...deployment,
      deviceId: `d${n}`,
    });
    const reads = new Map<string, number>();
    // DynamoDB applies Limit before the filter: every query of a shard reads undeployed slots only (shard 3 has one
    // active slot) and hands back a LastEvaluatedKey further on each time.
    mock.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: Record<string, string> }) => {
      const pk = input.ExpressionAttributeValues[':pk'] as string;
      const shard = Number(pk.split('#')[2]);
      const count = (reads.get(pk) ?? 0) + 1;
      reads.set(pk, count);
      return {
        Items: shard === 3 && count === 1 ? [active(3, 1)] : [],
        ScannedCount: 100,
        LastEvaluatedKey: { pk, sk: `d${String(count * 100 + shard).padStart(5, '0')}#s#1.0.0` },
      };
    });
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    const page = await repository.listActive('acme', undefined, 10, undefined);
    expect(mock.commandCalls(QueryCommand)).toHaveLength(MAX_QUERIES_PER_MERGED_PAGE);
    expect([...reads.keys()].sort()).toEqual(Array.from({ length: 16 }, (_, shard) => `ACTIVE#acme#${shard}`).sort());
    expect(page.items.map((item) => item.deviceId)).toEqual(['d1']);
    expect(page.nextCursor).toEqual(expect.any(String));
    // The cursor is where every shard was read up to: the least advanced shard's LastEvaluatedKey (shard 0, read
    // three times). Every shard resumes after it with a key condition.
    mock.resetHistory();
    await repository.listActive('acme', undefined, 10, page.nextCursor as string);
    const resumed = mock
      .commandCalls(QueryCommand)
      .slice(0, 16)
      .map((call) => call.args[0].input);
    for (const input of resumed) {
      expect(input).toMatchObject({
        KeyConditionExpression: 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: { ':after': 'd00300#s#1.0.0' },
      });
      expect(input.ExclusiveStartKey).toBeUndefined();
    }
  });

  it("one device's page is a Query of its shard only, within the one-partition budget", async () => {
    mock.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: Record<string, string> }) => ({
      Items: [],
      ScannedCount: 11,
      LastEvaluatedKey: { pk: input.ExpressionAttributeValues[':pk'], sk: 'acme-kiosk-0001#s#9.9.9' },
    }));
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    const page = await repository.listActive('acme', 'acme-kiosk-0001', 10, undefined);
    const calls = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(calls).toHaveLength(MAX_QUERIES_PER_PAGE);
    expect(calls[0]).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'ACTIVE#acme#8', ':prefix': 'acme-kiosk-0001#' },
      FilterExpression: 'attribute_not_exists(undeploy)',
      ConsistentRead: true,
    });
    expect(calls[1]?.ExclusiveStartKey).toEqual({ pk: 'ACTIVE#acme#8', sk: 'acme-kiosk-0001#s#9.9.9' });
    expect(page).toEqual({ items: [], nextCursor: expect.any(String) });
  });

  it('a purge deletes only the slot still marked with that UNDEPLOY; a slot deployed again since is left alone', async () => {
    mock.on(DeleteCommand).resolvesOnce({}).rejects(refused());
    const repository = new DynamoDbDeploymentRepository(documentClient, tables, cursors);
    const slot = { company: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'acme-welcome', version: '1.0.0' };
    await repository.purgeUndeployed([
      { ...slot, undeployId: 'A' },
      { ...slot, undeployId: 'B' },
    ]);
    expect(mock.commandCalls(DeleteCommand).map((call) => call.args[0].input)).toEqual([
      expect.objectContaining({ ConditionExpression: 'undeploy.id = :undeployId', ExpressionAttributeValues: { ':undeployId': 'A' } }),
      expect.objectContaining({ ConditionExpression: 'undeploy.id = :undeployId', ExpressionAttributeValues: { ':undeployId': 'B' } }),
    ]);
  });

  it('other errors are not mistaken for an outcome: they propagate (the item is then FAILURE / NONE)', async () => {
    mock.on(PutCommand).rejects(new InternalServerError({ message: 'boom', $metadata: {} }));
    await expect(new DynamoDbDeploymentRepository(documentClient, tables, cursors).activate(deployment)).rejects.toThrow('boom');
  });

  it('history is appended 25 entries per BatchWriteItem, unprocessed (throttled) entries retried until written', async () => {
    const written = new Set<string>();
    let calls = 0;
    mock.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> }) => {
      calls += 1;
      const requests = input.RequestItems.deployments!;
      // Every first attempt of a chunk leaves its last 5 entries unprocessed, as DynamoDB does when throttled.
      const processed = requests.length === 25 ? requests.slice(0, 20) : requests;
      for (const request of processed) written.add(request.PutRequest.Item.id as string);
      const unprocessed = requests.length === 25 ? requests.slice(20) : [];
      return Promise.resolve(unprocessed.length === 0 ? {} : { UnprocessedItems: { deployments: unprocessed } });
    });
    const entries = Array.from({ length: 60 }, (_, index) => historyEntry(index));
    await new DynamoDbDeploymentRepository(documentClient, tables, cursors).recordHistory(entries);
    expect(written).toEqual(new Set(entries.map((entry) => entry.id)));
    expect(calls).toBe(3 + 2);
    const item = mock.commandCalls(BatchWriteCommand)[0]!.args[0].input.RequestItems!.deployments![0]!.PutRequest!.Item!;
    expect(item).toMatchObject({
      pk: 'HISTORY#acme#acme-kiosk-0',
      sk: entries[0]!.id,
      // deploymentShardOf('acme-kiosk-0') is 9.
      gsi1pk: 'HISTORY#acme#acme-welcome#9',
      gsi2pk: 'HISTORY#acme#9',
    });
  });

  it('a history chunk that cannot be written fails the call with the number of unwritten entries, after every chunk was tried', async () => {
    mock.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> }) => {
      const requests = input.RequestItems.deployments!;
      if (requests[0]!.PutRequest.Item.id === historyEntry(25).id)
        return Promise.reject(new InternalServerError({ message: 'boom', $metadata: {} }));
      return Promise.resolve({});
    });
    const entries = Array.from({ length: 60 }, (_, index) => historyEntry(index));
    await expect(new DynamoDbDeploymentRepository(documentClient, tables, cursors).recordHistory(entries)).rejects.toThrow(
      /25 of 60 items not written/,
    );
    expect(mock.commandCalls(BatchWriteCommand)).toHaveLength(3);
  });
});
