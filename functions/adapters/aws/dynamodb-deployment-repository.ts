import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import pLimit from 'p-limit';
import type {
  ActiveDeployment,
  DeploymentSlot,
  DeviceSlot,
  DeviceStatus,
  HistoryEntry,
  UndeployMark,
} from '../../core/deployments/model.js';
import type { DeploymentRepository } from '../../core/deployments/ports.js';
import type { TargetStatusReader } from '../../core/rollouts/ports.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import { historyKeys } from './dynamodb-deployment-history.js';
import { isConditionalCheckFailed, type TableNames } from './dynamodb-shared.js';
import { mergeShards, queryBudget, type ShardRead } from './sharded-query.js';
import { DEPLOYMENT_SHARDS, deploymentShardOf } from './tables.js';

/**
 * The item a refused conditional write found (ReturnValuesOnConditionCheckFailure ALL_OLD), plain; undefined when
 * DynamoDB returned none (no item, or a server that does not support the option).
 */
function storedOnRefusal(error: unknown): Record<string, unknown> | undefined {
  const item = (error as { Item?: Record<string, AttributeValue> } | null)?.Item;
  return item === undefined ? undefined : unmarshall(item);
}

/** The listing an active-deployments cursor is bound to: the company and the device filter. */
const activeListing = (companyId: string, deviceId: string | undefined): string => cursorListing('active-deployments', companyId, deviceId);

/**
 * The signed cursor after the sort key `sk`. Only the sort key is carried: every shard of the company (or the device's
 * one) resumes after it.
 */
function encodeCursor(cursors: CursorCodec, companyId: string, deviceId: string | undefined, sk: string | undefined): string | null {
  return sk === undefined ? null : cursors.encode(activeListing(companyId, deviceId), { sk });
}

/**
 * The sort key a cursor `encodeCursor` issued for this company and device filter resumes after. Besides the
 * signature, the sort key must be a non-empty active deployment key under the device's prefix (defence in depth).
 * @throws BadRequestError (400) otherwise.
 */
function decodeCursor(cursors: CursorCodec, cursor: string, companyId: string, deviceId: string | undefined): string {
  const key = cursors.decode(activeListing(companyId, deviceId), cursor);
  const prefix = deviceId === undefined ? '' : `${deviceId}#`;
  const sk = key.sk;
  if (typeof sk !== 'string' || !sk.startsWith(prefix) || sk.length === prefix.length || Object.keys(key).length !== 1)
    throw invalidCursor();
  return sk;
}

/** The partition key of a company's deployment slots in `shard`. */
export function activePartition(companyId: string, shard: number): string {
  return `ACTIVE#${companyId}#${shard}`;
}

/** `entity` of a deployment slot item (active or undeployed) on the deployments table. */
export const DEPLOYMENT_SLOT_ENTITY = 'ACTIVE_DEPLOYMENT';

/** Most Query calls one page of one device's active deployments may take while undeployed slots are skipped. */
export const MAX_QUERIES_PER_PAGE = queryBudget(1);
/** Most Query calls one page of a company's active deployments (DEPLOYMENT_SHARDS shards merged) may take. */
export const MAX_QUERIES_PER_MERGED_PAGE = queryBudget(DEPLOYMENT_SHARDS);
/** Most items one Query of a listing evaluates. */
const MAX_ITEMS_PER_QUERY = 1_000;

/** Conditional deletes in flight at once in purgeUndeployed. */
const PURGE_CONCURRENCY = 8;

/** The device's latest status report stored on a slot item, or undefined when it has none. */
function deviceStatusFromItem(value: unknown): DeviceStatus | undefined {
  if (value === undefined || value === null || typeof value !== 'object') return undefined;
  const status = value as Record<string, unknown>;
  return {
    id: status.id as string,
    state: status.state as DeviceStatus['state'],
    ...(typeof status.message === 'string' ? { message: status.message } : {}),
    updated: status.updated as string,
  };
}

/** The rollout tag stored on a slot (ActiveDeployment.rollout), as a member to spread: empty when there is none. */
function rolloutTagFromItem(value: unknown): Pick<ActiveDeployment, 'rollout'> {
  const tag = value as { id?: unknown; wave?: unknown } | null | undefined;
  return typeof tag?.id === 'string' && typeof tag.wave === 'number' ? { rollout: { id: tag.id, wave: tag.wave } } : {};
}

/**
 * The deployment slot stored in a deployments table item (as a stream image or a read gives it), or undefined when
 * the item is something else (a history entry).
 */
export function deploymentSlotFromItem(item: Record<string, unknown> | undefined): DeploymentSlot | undefined {
  if (item === undefined || item.entity !== DEPLOYMENT_SLOT_ENTITY) return undefined;
  const undeploy = item.undeploy as Record<string, unknown> | undefined;
  const deviceStatus = deviceStatusFromItem(item.deviceStatus);
  return {
    id: item.id as string,
    company: item.company as string,
    deviceId: item.deviceId as string,
    scenarioId: item.scenarioId as string,
    version: item.version as string,
    deployedAt: item.deployedAt as string,
    deployedBy: item.deployedBy as string,
    ...(typeof item.note === 'string' ? { note: item.note } : {}),
    ...(deviceStatus === undefined ? {} : { deviceStatus }),
    ...(typeof item.movedFrom === 'string' ? { movedFrom: item.movedFrom } : {}),
    ...rolloutTagFromItem(item.rollout),
    ...(undeploy === undefined || undeploy === null
      ? {}
      : {
          undeploy: {
            id: undeploy.id as string,
            at: undeploy.at as string,
            by: undeploy.by as string,
            ...(typeof undeploy.note === 'string' ? { note: undeploy.note } : {}),
            ...(undeploy.cause === 'DEVICE_DELETED' ? { cause: undeploy.cause } : {}),
          },
        }),
  };
}

/**
 * DeploymentRepository on the deployments table (key design in tables.ts). A DEPLOY puts the slot, an UNDEPLOY marks
 * it (`undeploy`): each one conditional write that carries everything its history entry and event need, which the
 * table's stream derives (deployment-changes.ts) before purging the undeployed slot. Reads skip undeployed slots;
 * listing cursors are signed by `cursors`.
 */
export class DynamoDbDeploymentRepository implements DeploymentRepository, TargetStatusReader {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
    private readonly cursors: CursorCodec,
  ) {}

  private historyItem(entry: HistoryEntry): Record<string, unknown> {
    return { ...entry, ...historyKeys(entry), entity: 'DEPLOYMENT_HISTORY' };
  }

  private activeKey(identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>) {
    return {
      pk: activePartition(identity.company, deploymentShardOf(identity.deviceId)),
      sk: `${identity.deviceId}#${identity.scenarioId}#${identity.version}`,
    };
  }

  /**
   * @inheritdoc
   * A refusal that shows this very deployment stored (the SDK retried a put whose answer was lost) is `activated`:
   * the change was made, and its history entry comes from the stream.
   */
  async activate(deployment: ActiveDeployment): Promise<'activated' | 'already-active'> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tables.deployments,
          Item: { ...deployment, ...this.activeKey(deployment), entity: DEPLOYMENT_SLOT_ENTITY },
          // A slot undeployed but not yet purged counts as absent.
          ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(undeploy)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'activated';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return deploymentSlotFromItem(storedOnRefusal(error))?.id === deployment.id ? 'activated' : 'already-active';
    }
  }

  /** @inheritdoc */
  async deactivate(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    undeploy: UndeployMark,
  ): Promise<'deactivated' | 'already-inactive'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.deployments,
          Key: this.activeKey(identity),
          UpdateExpression: 'SET undeploy = :undeploy',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undeploy)',
          ExpressionAttributeValues: { ':undeploy': undeploy },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'deactivated';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // This very UNDEPLOY already stored (a retried update whose answer was lost): the change was made.
      return deploymentSlotFromItem(storedOnRefusal(error))?.undeploy?.id === undeploy.id ? 'deactivated' : 'already-inactive';
    }
  }

  /** @inheritdoc */
  async recordHistory(entries: readonly HistoryEntry[]): Promise<void> {
    await batchPutAll(
      this.client,
      this.tables.deployments,
      entries.map((entry) => this.historyItem(entry)),
    );
  }

  /** @inheritdoc */
  async purgeUndeployed(
    slots: readonly (Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'> & { undeployId: string })[],
  ): Promise<void> {
    const limit = pLimit(PURGE_CONCURRENCY);
    await Promise.all(
      slots.map((slot) =>
        limit(async () => {
          try {
            await this.client.send(
              new DeleteCommand({
                TableName: this.tables.deployments,
                Key: this.activeKey(slot),
                ConditionExpression: 'undeploy.id = :undeployId',
                ExpressionAttributeValues: { ':undeployId': slot.undeployId },
              }),
            );
          } catch (error) {
            if (!isConditionalCheckFailed(error)) throw error;
          }
        }),
      ),
    );
  }

  /**
   * @inheritdoc
   * Projects the slot's identity, deployment time, status and `undeploy` only (undeployed slots waiting for their
   * purge are dropped by a FilterExpression), following LastEvaluatedKey to the last page.
   */
  async activeOnDevice(companyId: string, deviceId: string): Promise<DeviceSlot[]> {
    const slots: DeviceSlot[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.deployments,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: 'attribute_not_exists(#undeploy)',
          ProjectionExpression: '#id, #scenarioId, #version, #deployedAt, #deviceStatus',
          ExpressionAttributeNames: {
            '#id': 'id',
            '#scenarioId': 'scenarioId',
            '#version': 'version',
            '#deployedAt': 'deployedAt',
            '#deviceStatus': 'deviceStatus',
            '#undeploy': 'undeploy',
          },
          ExpressionAttributeValues: { ':pk': activePartition(companyId, deploymentShardOf(deviceId)), ':prefix': `${deviceId}#` },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      for (const item of response.Items ?? []) {
        const deviceStatus = deviceStatusFromItem(item.deviceStatus);
        slots.push({
          id: item.id as string,
          scenarioId: item.scenarioId as string,
          version: item.version as string,
          deployedAt: item.deployedAt as string,
          ...(deviceStatus === undefined ? {} : { deviceStatus }),
        });
      }
      startKey = response.LastEvaluatedKey;
    } while (startKey !== undefined);
    return slots;
  }

  /** @inheritdoc */
  async recordDeviceStatus(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    status: DeviceStatus,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.deployments,
          Key: this.activeKey(identity),
          UpdateExpression: 'SET deviceStatus = :status',
          // Only an active slot: never one marked undeployed (its purge is pending), never a new item.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undeploy)',
          ExpressionAttributeValues: { ':status': status },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return false;
    }
  }

  /** @inheritdoc */
  async activeAmong(
    companyId: string,
    identities: readonly Pick<ActiveDeployment, 'deviceId' | 'scenarioId' | 'version'>[],
  ): Promise<Set<string>> {
    if (identities.length === 0) return new Set();
    const keys = [
      ...new Map(identities.map((identity) => [`${identity.deviceId}#${identity.scenarioId}#${identity.version}`, identity])),
    ].map(([sk, identity]) => ({ pk: activePartition(companyId, deploymentShardOf(identity.deviceId)), sk }));
    const items = await batchGetAll(this.client, this.tables.deployments, keys, ['sk', 'undeploy']);
    return new Set(items.filter((item) => item.undeploy === undefined).map((item) => item.sk as string));
  }

  /**
   * @inheritdoc
   * BatchGetItem of each device's slot of the version (its shard's `ACTIVE#` partition), projecting its status and
   * undeploy mark only: an undeployed slot waiting for the stream to purge it has no status to show.
   */
  async deviceStatuses(
    companyId: string,
    scenarioId: string,
    version: string,
    deviceIds: readonly string[],
  ): Promise<Map<string, DeviceStatus>> {
    const keys = [...new Set(deviceIds)].map((deviceId) => ({
      pk: activePartition(companyId, deploymentShardOf(deviceId)),
      sk: `${deviceId}#${scenarioId}#${version}`,
    }));
    const items =
      keys.length === 0 ? [] : await batchGetAll(this.client, this.tables.deployments, keys, ['deviceId', 'deviceStatus', 'undeploy']);
    const statuses = new Map<string, DeviceStatus>();
    for (const item of items) {
      const status = item.undeploy === undefined ? deviceStatusFromItem(item.deviceStatus) : undefined;
      if (status !== undefined) statuses.set(item.deviceId as string, status);
    }
    return statuses;
  }

  /**
   * @inheritdoc
   * One device's: a Query of its shard. The company's: its DEPLOYMENT_SHARDS shards merged in sort key order
   * (mergeShards), each resuming after the cursor's sort key. Undeployed slots wait for the stream to purge them:
   * a FilterExpression drops them after DynamoDB's Limit, so shards are read on until the page is full, within
   * MAX_QUERIES_PER_PAGE (one shard) or MAX_QUERIES_PER_MERGED_PAGE calls; then the page ends early, with a cursor.
   */
  async listActive(
    companyId: string,
    deviceId: string | undefined,
    limit: number,
    cursor: string | undefined,
  ): Promise<Page<ActiveDeployment>> {
    const after = cursor === undefined ? undefined : decodeCursor(this.cursors, cursor, companyId, deviceId);
    const shards = deviceId === undefined ? Array.from({ length: DEPLOYMENT_SHARDS }, (_, shard) => shard) : [deploymentShardOf(deviceId)];
    const page = await mergeShards((shard, from, readLimit) => this.readActive(companyId, shard, deviceId, from, readLimit), {
      shards,
      order: 'ascending',
      sortKey: (item) => item.sk as string,
      after,
      limit,
      maxQueries: queryBudget(shards.length),
      maxItemsPerQuery: MAX_ITEMS_PER_QUERY,
    });
    const items = page.items.map((item) => {
      const { undeploy: _undeploy, movedFrom: _movedFrom, ...slot } = deploymentSlotFromItem(item) as DeploymentSlot;
      return slot;
    });
    return { items, nextCursor: encodeCursor(this.cursors, companyId, deviceId, page.next) };
  }

  /**
   * One read of a slot shard for listActive: active slots after the sort key `after` (a device's only when `deviceId`
   * is given: its prefix, with `after` as ExclusiveStartKey since a key condition takes one operator on the sort key).
   */
  private async readActive(
    companyId: string,
    shard: number,
    deviceId: string | undefined,
    after: string | undefined,
    limit: number,
  ): Promise<ShardRead<Record<string, unknown>>> {
    const pk = activePartition(companyId, shard);
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.deployments,
        ...(deviceId !== undefined
          ? {
              KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
              ExpressionAttributeValues: { ':pk': pk, ':prefix': `${deviceId}#` },
              ...(after === undefined ? {} : { ExclusiveStartKey: { pk, sk: after } }),
            }
          : after === undefined
            ? { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }
            : { KeyConditionExpression: 'pk = :pk AND sk > :after', ExpressionAttributeValues: { ':pk': pk, ':after': after } }),
        FilterExpression: 'attribute_not_exists(undeploy)',
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return {
      items: response.Items ?? [],
      lastEvaluated: response.LastEvaluatedKey?.sk as string | undefined,
      evaluated: response.ScannedCount ?? response.Items?.length ?? 0,
    };
  }
}
