import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DeviceCounter } from '../../core/companies/ports.js';
import type { TableNames } from './dynamodb-shared.js';

/**
 * DeviceCounter on the devices table: a paginated Query of the company's partition with `Select: COUNT`. DynamoDB
 * returns no item but still reads (and bills) every item it counts, 1 MB per page: a device item is ~1 to 2 KB, so
 * 10,000 devices are ~15 MB read, ~15 pages and ~1,900 read units (eventually consistent, 4 KB per half unit).
 * A device being deleted (`deleting`) is not counted.
 */
export class DynamoDbDeviceCounter implements DeviceCounter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async count(companyId: string): Promise<number> {
    let total = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tables.devices,
          KeyConditionExpression: 'company = :company',
          FilterExpression: 'attribute_not_exists(deleting)',
          ExpressionAttributeValues: { ':company': companyId },
          Select: 'COUNT',
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      total += page.Count ?? 0;
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return total;
  }
}
