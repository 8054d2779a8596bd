import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PresenceRepository } from '../../core/ports.js';
import type { TableNames } from './dynamodb-shared.js';

/** The presence table's key of a device: `{company}#{deviceId}` (ids never contain `#`). */
export function presenceKeyOf(company: string, deviceId: string): string {
  return `${company}#${deviceId}`;
}

/** PresenceRepository on the presence table (key design in tables.ts). */
export class DynamoDbPresenceRepository implements PresenceRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async forget(company: string, deviceId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tables.presence, Key: { deviceKey: presenceKeyOf(company, deviceId) } }));
  }
}
