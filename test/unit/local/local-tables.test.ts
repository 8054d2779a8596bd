/**
 * Local tables on a real DynamoDB Local: every streamed table's stream starts with its anchor record, ahead of any
 * data written to any table afterwards (DynamoDB Local walks every stream's older records on each write to a
 * streamed table until it meets the table's own oldest one).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { ensureTables, STREAM_ANCHOR_ENTITY } from '../../../functions/local/tables.js';

let directory: string;
let dynamo: DynamoDbLocal;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-tables-'));
  dynamo = await startDynamoDbLocal({ dataDirectory: directory, port: await freePort() });
}, 60_000);

afterAll(async () => {
  await dynamo?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('ensureTables', () => {
  it('gives each streamed table an anchor record older than any data written after', async () => {
    const config = { endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
    const client = new DynamoDBClient(config);
    const arns = await ensureTables(client, LOCAL_TABLES);
    await client.send(
      new PutItemCommand({
        TableName: 'devices',
        Item: { company: { S: 'acme' }, deviceId: { S: 'acme-kiosk-0001' }, entity: { S: 'DEVICE' } },
      }),
    );
    await client.send(
      new PutItemCommand({
        TableName: 'deployments',
        Item: { pk: { S: 'ACTIVE#acme#8' }, sk: { S: 'acme-kiosk-0001#s#1.0.0' }, entity: { S: 'ACTIVE_DEPLOYMENT' } },
      }),
    );
    const streams = new DynamoDBStreamsClient(config);
    const firstRecords: { entity: string | undefined; sequence: bigint }[] = [];
    const dataRecords: bigint[] = [];
    for (const arn of [...arns.search, ...arns['deployment-changes']]) {
      const shard = (await streams.send(new DescribeStreamCommand({ StreamArn: arn }))).StreamDescription?.Shards?.[0]?.ShardId as string;
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      const records = (await streams.send(new GetRecordsCommand({ ShardIterator }))).Records ?? [];
      const [first, ...rest] = records;
      firstRecords.push({ entity: first?.dynamodb?.NewImage?.entity?.S, sequence: BigInt(first?.dynamodb?.SequenceNumber ?? '-1') });
      dataRecords.push(...rest.map((record) => BigInt(record.dynamodb?.SequenceNumber ?? '-1')));
    }
    expect(firstRecords.map((record) => record.entity)).toEqual([STREAM_ANCHOR_ENTITY, STREAM_ANCHOR_ENTITY, STREAM_ANCHOR_ENTITY]);
    expect(dataRecords).toHaveLength(2);
    for (const anchor of firstRecords) for (const data of dataRecords) expect(anchor.sequence < data).toBe(true);
    streams.destroy();
    client.destroy();
  });
});
