/**
 * The presence repository's and the device health write's DynamoDB requests: what each one conditions on, and how a
 * refused condition or a cancelled transaction becomes an outcome (aws-sdk-client-mock).
 */
import { ConditionalCheckFailedException, DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbDeviceRepository } from '../../../functions/adapters/aws/dynamodb-device-repository.js';
import { DynamoDbPresenceRepository } from '../../../functions/adapters/aws/dynamodb-presence-repository.js';
import { heartbeatShardOf } from '../../../functions/adapters/aws/tables.js';

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
afterEach(() => mock.reset());

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const conditionFailed = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

const overdue = { company: 'acme', deviceId: 'k1', lastSeen: '2026-03-01T12:00:00.000Z', sweepAt: '2026-03-01T12:05:00.000Z' };

describe('DynamoDbPresenceRepository', () => {
  it('records a report as one put of the entry with its shard and deadline, telling whether a deadline was replaced', async () => {
    mock
      .on(PutCommand)
      .resolvesOnce({ Attributes: { deviceKey: 'acme#k1', sweepAt: '2026-03-01T12:04:00.000Z' } })
      .resolvesOnce({});
    const presence = new DynamoDbPresenceRepository(documentClient, tables);
    expect(await presence.touch('acme', 'k1', '2026-03-01T12:00:00.000Z', '2026-03-01T12:05:00.000Z')).toEqual({ watched: true });
    expect(await presence.touch('acme', 'k1', '2026-03-01T12:00:00.000Z', '2026-03-01T12:05:00.000Z')).toEqual({ watched: false });
    expect(mock.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'presence',
      Item: {
        deviceKey: 'acme#k1',
        company: 'acme',
        deviceId: 'k1',
        lastSeen: '2026-03-01T12:00:00.000Z',
        sweepShard: heartbeatShardOf('acme#k1'),
        sweepAt: '2026-03-01T12:05:00.000Z',
      },
      ReturnValues: 'ALL_OLD',
    });
  });

  it('disconnects in one transaction: the entry only with its deadline unchanged, the device only while CONNECTED', async () => {
    mock.on(TransactWriteCommand).resolves({});
    const presence = new DynamoDbPresenceRepository(documentClient, tables);
    expect(await presence.disconnect(overdue, overdue.sweepAt, '2026-03-01T12:06:00.000Z')).toBe('disconnected');
    const [entry, device] = mock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems ?? [];
    expect(entry?.Update).toMatchObject({
      TableName: 'presence',
      Key: { deviceKey: 'acme#k1' },
      UpdateExpression: 'REMOVE sweepShard, sweepAt',
      ConditionExpression: 'sweepAt = :due',
      ExpressionAttributeValues: { ':due': '2026-03-01T12:05:00.000Z' },
    });
    expect(device?.Update).toMatchObject({ TableName: 'devices', Key: { company: 'acme', deviceId: 'k1' } });
    expect(device?.Update?.ConditionExpression).toContain('#connection.#state = :connected');
    expect(device?.Update?.ConditionExpression).toContain('attribute_not_exists(#deleting)');
    expect(device?.Update?.ExpressionAttributeValues).toMatchObject({
      ':disconnected': { state: 'DISCONNECTED', disconnectedSince: '2026-03-01T12:05:00.000Z' },
      ':updated': '2026-03-01T12:06:00.000Z',
    });
  });

  it('changes nothing when a report moved the deadline (the entry condition failed)', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const presence = new DynamoDbPresenceRepository(documentClient, tables);
    expect(await presence.disconnect(overdue, overdue.sweepAt, '2026-03-01T12:06:00.000Z')).toBe('superseded');
    expect(mock.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('only releases the deadline, still conditionally, when the device is gone or not CONNECTED', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));
    mock.on(UpdateCommand).resolvesOnce({}).rejectsOnce(conditionFailed());
    const presence = new DynamoDbPresenceRepository(documentClient, tables);
    expect(await presence.disconnect(overdue, overdue.sweepAt, '2026-03-01T12:06:00.000Z')).toBe('released');
    expect(mock.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'presence',
      UpdateExpression: 'REMOVE sweepShard, sweepAt',
      ConditionExpression: 'sweepAt = :due',
    });
    // A report between the transaction and the release: its deadline stays.
    expect(await presence.disconnect(overdue, overdue.sweepAt, '2026-03-01T12:06:00.000Z')).toBe('superseded');
  });

  it('retries a transaction that only conflicted with a concurrent one', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    const presence = new DynamoDbPresenceRepository(documentClient, tables);
    expect(await presence.disconnect(overdue, overdue.sweepAt, '2026-03-01T12:06:00.000Z')).toBe('disconnected');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });
});

describe('DynamoDbDeviceRepository.recordHealth', () => {
  const health = { updated: '2026-03-01T12:00:00.000Z', versionCode: '1', versionName: '1.0', mode: 'SERVER' as const, hubs: [] };

  it('writes health, connection and updated only for an existing, not deleting device with the same credential', async () => {
    mock.on(UpdateCommand).resolves({});
    const devices = new DynamoDbDeviceRepository(documentClient, tables);
    expect(
      await devices.recordHealth('acme', 'k1', 'CRED', { health, connectedSince: '2026-03-01T11:00:00.000Z', updated: health.updated }),
    ).toBe('recorded');
    const input = mock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.ConditionExpression).toBe(
      'attribute_exists(deviceId) AND (attribute_not_exists(#deleting) OR #deleting = :false) AND #credential.#id = :credential',
    );
    expect(input?.ExpressionAttributeValues).toMatchObject({
      ':connection': { state: 'CONNECTED', connectedSince: '2026-03-01T11:00:00.000Z' },
      ':credential': 'CRED',
    });
  });

  it('answers refused when the condition fails', async () => {
    mock.on(UpdateCommand).rejects(conditionFailed());
    const devices = new DynamoDbDeviceRepository(documentClient, tables);
    expect(await devices.recordHealth('acme', 'k1', 'CRED', { health, connectedSince: health.updated, updated: health.updated })).toBe(
      'refused',
    );
  });
});
