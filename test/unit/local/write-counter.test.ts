import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { SearchIndex } from '../../../functions/core/search/ports.js';
import { WriteCounter } from '../../../functions/local/write-counter.js';

/** A client whose requests never reach a backend (nothing listens on port 1): only the counting middleware runs. */
function unreachableClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    }),
  );
}

describe('WriteCounter', () => {
  it('counts item writes per table, each batch and transaction item once, and no reads or condition checks', async () => {
    const client = unreachableClient();
    const counter = new WriteCounter();
    counter.watchDynamoDb(client);
    const commands = [
      new PutCommand({ TableName: 'presence', Item: { deviceKey: 'a#b' } }),
      new UpdateCommand({
        TableName: 'devices',
        Key: { company: 'a', deviceId: 'b' },
        UpdateExpression: 'SET x = :x',
        ExpressionAttributeValues: { ':x': 1 },
      }),
      new GetCommand({ TableName: 'devices', Key: { company: 'a', deviceId: 'b' } }),
      new BatchWriteCommand({
        RequestItems: { deployments: [{ PutRequest: { Item: { pk: '1', sk: '1' } } }, { PutRequest: { Item: { pk: '2', sk: '2' } } }] },
      }),
      new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: 'presence', Key: { deviceKey: 'a#b' }, ConditionExpression: 'attribute_exists(deviceKey)' } },
          {
            Update: {
              TableName: 'devices',
              Key: { company: 'a', deviceId: 'b' },
              UpdateExpression: 'SET y = :y',
              ExpressionAttributeValues: { ':y': 1 },
            },
          },
        ],
      }),
    ];
    for (const command of commands) await client.send(command as never).catch(() => undefined);
    expect(counter.counts().dynamoDb).toEqual({ presence: 1, devices: 2, deployments: 2 });
    client.destroy();
  });

  it('counts the documents a search index upserts and removes', async () => {
    const written: string[] = [];
    const index = {
      upsert: async (documents: { id: string }[]) => void written.push(...documents.map((document) => document.id)),
      remove: async () => undefined,
    } as unknown as SearchIndex;
    const counter = new WriteCounter();
    counter.watchSearchIndex(index);
    await index.upsert([{ id: 'd1' }, { id: 'd2' }] as never);
    await index.remove([{ id: 'd3' }] as never);
    expect(counter.counts().searchDocuments).toBe(3);
    expect(written).toEqual(['d1', 'd2']);
  });
});
