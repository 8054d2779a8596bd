import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Device, StoredDevice } from '../../core/devices.js';
import type { DeviceRepository } from '../../core/ports.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import type { TableNames } from './dynamodb-shared.js';

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
}
