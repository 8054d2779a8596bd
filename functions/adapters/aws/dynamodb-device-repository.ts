import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DeviceDocumentReader } from '../../core/alerts/backfill.js';
import type { Device, DeviceCredential, StoredDevice } from '../../core/devices/model.js';
import type { DeviceRepository, DeviceStaticFields } from '../../core/devices/ports.js';
import type { TargetHealthReader } from '../../core/rollouts/ports.js';
import { type DeviceDocument, deviceDocumentOf } from '../../core/search/documents.js';
import { deviceFromItem, deviceItem, storedHealth } from './device-items.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import { isConditionalCheckFailed, type TableNames } from './dynamodb-shared.js';

/** The item a refused conditional write found (ReturnValuesOnConditionCheckFailure ALL_OLD), plain, or undefined. */
function storedOnRefusal(error: unknown): Record<string, unknown> | undefined {
  const item = (error as { Item?: Record<string, AttributeValue> } | null)?.Item;
  return item === undefined ? undefined : unmarshall(item);
}

/** Only an existing device that is not being deleted may change. */
const PRESENT_AND_NOT_DELETING = 'attribute_exists(deviceId) AND attribute_not_exists(deleting)';

/** The attributes of a device's search document (and its `deleting` mark): no credential, no desired state. */
const DOCUMENT_ATTRIBUTES = [
  'company',
  'deviceId',
  'serial',
  'created',
  'updated',
  'connection',
  'location',
  'geoLocation',
  'health',
  'deleting',
] as const;

/**
 * DeviceRepository on the devices table (pk `company`, sk `deviceId`; the item is the device resource plus `entity`,
 * commands' free-form members as JSON text: device-items.ts); and the rollouts' TargetHealthReader.
 */
export class DynamoDbDeviceRepository implements DeviceRepository, TargetHealthReader, DeviceDocumentReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>> {
    if (deviceIds.length === 0) return new Set();
    const keys = [...new Set(deviceIds)].map((deviceId) => ({ company: companyId, deviceId }));
    const items = await batchGetAll(this.client, this.tables.devices, keys, ['deviceId', 'deleting']);
    return new Set(items.filter((item) => item.deleting !== true).map((item) => item.deviceId as string));
  }

  /** @inheritdoc (TargetHealthReader: the `health` member alone is read, never the credential) */
  async healthOf(companyId: string, deviceIds: readonly string[]): Promise<Map<string, Pick<StoredDevice, 'health'>>> {
    if (deviceIds.length === 0) return new Map();
    const keys = [...new Set(deviceIds)].map((deviceId) => ({ company: companyId, deviceId }));
    const items = await batchGetAll(this.client, this.tables.devices, keys, ['deviceId', 'deleting', 'health']);
    return new Map(
      items
        .filter((item) => item.deleting !== true)
        .map((item) => [item.deviceId as string, { health: deviceFromItem({ deviceId: item.deviceId, health: item.health }).health }]),
    );
  }

  /** @inheritdoc (DeviceDocumentReader: the resource's members alone are read, never the credential) */
  async documentsOf(companyId: string, deviceIds: readonly string[]): Promise<DeviceDocument[]> {
    if (deviceIds.length === 0) return [];
    const keys = [...new Set(deviceIds)].map((deviceId) => ({ company: companyId, deviceId }));
    const items = await batchGetAll(this.client, this.tables.devices, keys, [...DOCUMENT_ATTRIBUTES]);
    return items.filter((item) => item.deleting !== true).map((item) => deviceDocumentOf(deviceFromItem(item)));
  }

  /** @inheritdoc */
  async put(devices: readonly Device[]): Promise<void> {
    await batchPutAll(
      this.client,
      this.tables.devices,
      devices.map((device) => deviceItem(device)),
    );
  }

  /** @inheritdoc */
  async get(companyId: string, deviceId: string): Promise<StoredDevice | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.devices, Key: { company: companyId, deviceId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : deviceFromItem(Item);
  }

  /** @inheritdoc */
  async create(device: Device): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tables.devices,
          Item: deviceItem(device),
          ConditionExpression: 'attribute_not_exists(deviceId)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // This very put already stored (an SDK retry whose first answer was lost): the device was created by this call.
      const stored = storedOnRefusal(error);
      return stored?.created === device.created && stored?.serial === device.serial && stored?.deleting === undefined;
    }
  }

  /** @inheritdoc */
  async update(companyId: string, deviceId: string, fields: DeviceStaticFields, updated: string): Promise<StoredDevice | undefined> {
    const values: Record<string, unknown> = { updated };
    for (const name of ['serial', 'location', 'geoLocation'] as const) if (fields[name] !== undefined) values[name] = fields[name];
    const names = Object.keys(values);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tables.devices,
          Key: { company: companyId, deviceId },
          UpdateExpression: `SET ${names.map((_, index) => `#f${index} = :f${index}`).join(', ')}`,
          ConditionExpression: PRESENT_AND_NOT_DELETING,
          ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#f${index}`, name])),
          ExpressionAttributeValues: Object.fromEntries(names.map((name, index) => [`:f${index}`, values[name]])),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes === undefined ? undefined : deviceFromItem(Attributes);
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /** @inheritdoc */
  async setCredential(companyId: string, deviceId: string, credential: DeviceCredential): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.devices,
          Key: { company: companyId, deviceId },
          UpdateExpression: 'SET credential = :credential',
          ConditionExpression: PRESENT_AND_NOT_DELETING,
          ExpressionAttributeValues: { ':credential': credential },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async markDeleting(companyId: string, deviceId: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.devices,
          Key: { company: companyId, deviceId },
          UpdateExpression: 'SET deleting = :deleting',
          ConditionExpression: 'attribute_exists(deviceId)',
          ExpressionAttributeValues: { ':deleting': true },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async remove(companyId: string, deviceId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tables.devices, Key: { company: companyId, deviceId } }));
  }

  /** @inheritdoc */
  async setDesiredState(
    companyId: string,
    deviceId: string,
    tag: string,
    expectedGeneration: number | undefined,
  ): Promise<'written' | 'conflict' | 'absent'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.devices,
          Key: { company: companyId, deviceId },
          UpdateExpression: 'SET #desired = :desired',
          ConditionExpression:
            expectedGeneration === undefined
              ? 'attribute_exists(deviceId) AND attribute_not_exists(#desired)'
              : 'attribute_exists(deviceId) AND #desired.#generation = :expected',
          ExpressionAttributeNames: {
            '#desired': 'desiredState',
            ...(expectedGeneration === undefined ? {} : { '#generation': 'generation' }),
          },
          ExpressionAttributeValues: {
            ':desired': { tag, generation: (expectedGeneration ?? 0) + 1 },
            ...(expectedGeneration === undefined ? {} : { ':expected': expectedGeneration }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'written';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return storedOnRefusal(error) === undefined ? 'absent' : 'conflict';
    }
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
            ':health': storedHealth(report.health),
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
