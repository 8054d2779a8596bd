import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { TABLES, type TableName } from '../adapters/aws/tables.js';

/**
 * Creates the four tables in DynamoDB Local if they do not exist, with the key design of `tables.ts` and
 * NEW_AND_OLD_IMAGES streams on the searchable ones (the CDK stack declares the same).
 * @returns the stream ARN of each searchable table.
 */
export async function ensureTables(client: DynamoDBClient, names: Record<TableName, string>): Promise<Map<string, string>> {
  const streams = new Map<string, string>();
  for (const [logical, schema] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) {
    const tableName = names[logical];
    let description;
    try {
      description = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
      const indexes = 'globalSecondaryIndexes' in schema ? schema.globalSecondaryIndexes : [];
      const attributes = new Set<string>([schema.partitionKey, ...('sortKey' in schema ? [schema.sortKey] : [])]);
      for (const index of indexes) {
        attributes.add(index.partitionKey);
        attributes.add(index.sortKey);
      }
      description = (
        await client.send(
          new CreateTableCommand({
            TableName: tableName,
            BillingMode: 'PAY_PER_REQUEST',
            AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
            KeySchema: [
              { AttributeName: schema.partitionKey, KeyType: 'HASH' },
              ...('sortKey' in schema ? [{ AttributeName: schema.sortKey, KeyType: 'RANGE' as const }] : []),
            ],
            ...(indexes.length === 0
              ? {}
              : {
                  GlobalSecondaryIndexes: indexes.map((index) => ({
                    IndexName: index.indexName,
                    KeySchema: [
                      { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
                      { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
                    ],
                    Projection: { ProjectionType: 'ALL' as const },
                  })),
                }),
            ...(schema.streamsToSearch ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const } } : {}),
          }),
        )
      ).TableDescription;
    }
    if (schema.streamsToSearch && description?.LatestStreamArn !== undefined) streams.set(tableName, description.LatestStreamArn);
  }
  return streams;
}
