import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Device, StoredDevice } from '../../core/devices.js';
import type { DeviceRepository } from '../../core/ports.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import { isConditionalCheckFailed, type TableNames } from './dynamodb-shared.js';

/** DeviceRepository on the devices table. */
export class DynamoDbDeviceRepository implements DeviceRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>> {
    if (deviceIds.length === 0) return new Set();
    const keys = [...new Set(deviceIds)].map((deviceId) => ({ company: companyId, deviceId }));
    const items = await batchGetAll(this.client, this.tables.devices, keys, ['deviceId']);
    return new Set(items.map((item) => item.deviceId as string));
  }

  /** @inheritdoc */
  async put(devices: readonly Device[]): Promise<void> {
    await batchPutAll(
      this.client,
      this.tables.devices,
      devices.map((device) => ({ ...device, deviceId: device.id, entity: 'DEVICE' })),
    );
  }

  /** @inheritdoc */
  async get(companyId: string, deviceId: string): Promise<StoredDevice | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.devices, Key: { company: companyId, deviceId }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const { deviceId: id, entity: _entity, ...device } = Item;
    return { ...device, id } as StoredDevice;
  }

  /** @inheritdoc */
  async recordHealth(
    companyId: string,
    deviceId: string,
    credentialId: string,
    report: { health: NonNullable<Device['health']>; connectedSince: string; updated: string },
  ): Promise<'recorded' | 'refused'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.devices,
          Key: { company: companyId, deviceId },
          UpdateExpression: 'SET #health = :health, #connection = :connection, #updated = :updated',
          ConditionExpression:
            'attribute_exists(deviceId) AND (attribute_not_exists(#deleting) OR #deleting = :false) AND #credential.#id = :credential',
          ExpressionAttributeNames: {
            '#health': 'health',
            '#connection': 'connection',
            '#updated': 'updated',
            '#deleting': 'deleting',
            '#credential': 'credential',
            '#id': 'id',
          },
          ExpressionAttributeValues: {
            ':health': report.health,
            ':connection': { state: 'CONNECTED', connectedSince: report.connectedSince },
            ':updated': report.updated,
            ':false': false,
            ':credential': credentialId,
          },
        }),
      );
      return 'recorded';
    } catch (error) {
      if (isConditionalCheckFailed(error)) return 'refused';
      throw error;
    }
  }
}
