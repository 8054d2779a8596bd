import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DisconnectOutcome, OverduePresence, PresenceRepository } from '../../core/devices/ports.js';
import { cancellationCodes, isConditionalCheckFailed, overdueItems, sendTransaction, type TableNames } from './dynamodb-shared.js';
import { heartbeatShardOf } from './tables.js';

/** The presence table's key of a device: `{company}#{deviceId}` (neither id contains `#`). */
export function presenceKey(company: string, deviceId: string): string {
  return `${company}#${deviceId}`;
}

/** A device that is not being deleted (`deleting` absent, or false). */
const NOT_DELETING = '(attribute_not_exists(#deleting) OR #deleting = :false)';

/**
 * PresenceRepository on the presence table (key design in tables.ts), with the devices table for the transaction that
 * disconnects a device. Every write is one item, or one transaction of two.
 */
export class DynamoDbPresenceRepository implements PresenceRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /** @inheritdoc */
  async touch(company: string, deviceId: string, lastSeen: string, sweepAt: string): Promise<{ watched: boolean }> {
    const deviceKey = presenceKey(company, deviceId);
    // ALL_OLD costs nothing more than the put (write units are charged on the larger of the two items, ~100 bytes).
    const { Attributes } = await this.client.send(
      new PutCommand({
        TableName: this.tables.presence,
        Item: { deviceKey, company, deviceId, lastSeen, sweepShard: heartbeatShardOf(deviceKey), sweepAt },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return { watched: typeof Attributes?.sweepAt === 'string' };
  }

  /** @inheritdoc */
  async overdue(now: string, limit: number): Promise<OverduePresence[]> {
    return (await overdueItems(this.client, this.tables.presence, 'HEARTBEAT', now, limit)).map((item) => ({
      company: item.company as string,
      deviceId: item.deviceId as string,
      lastSeen: item.lastSeen as string,
      sweepAt: item.sweepAt as string,
    }));
  }

  /**
   * @inheritdoc
   * One TransactWriteItems of two updates (a transaction may not name one item twice, so the presence entry's
   * "still this deadline" check is the condition of its own update): [0] the entry drops `sweepShard`/`sweepAt` if
   * `sweepAt` is unchanged; [1] the device gets `connection` = DISCONNECTED since `disconnectedSince`, and `updated`,
   * if CONNECTED and not being deleted (a missing device fails that condition too). Cancelled by [0]: superseded.
   * Cancelled by [1] only: the entry alone drops its deadline, with the same condition. Retried while it only conflicts
   * with a concurrent transaction.
   */
  async disconnect(entry: OverduePresence, disconnectedSince: string, updated: string): Promise<DisconnectOutcome> {
    const deviceKey = presenceKey(entry.company, entry.deviceId);
    const release = {
      TableName: this.tables.presence,
      Key: { deviceKey },
      UpdateExpression: 'REMOVE sweepShard, sweepAt',
      ConditionExpression: 'sweepAt = :due',
      ExpressionAttributeValues: { ':due': entry.sweepAt },
    };
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          { Update: release },
          {
            Update: {
              TableName: this.tables.devices,
              Key: { company: entry.company, deviceId: entry.deviceId },
              UpdateExpression: 'SET #connection = :disconnected, #updated = :updated',
              ConditionExpression: `#connection.#state = :connected AND ${NOT_DELETING}`,
              ExpressionAttributeNames: { '#connection': 'connection', '#state': 'state', '#updated': 'updated', '#deleting': 'deleting' },
              ExpressionAttributeValues: {
                ':disconnected': { state: 'DISCONNECTED', disconnectedSince },
                ':updated': updated,
                ':connected': 'CONNECTED',
                ':false': false,
              },
            },
          },
        ],
      });
      return 'disconnected';
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[0] === 'ConditionalCheckFailed') return 'superseded';
      if (codes?.[1] !== 'ConditionalCheckFailed') throw error;
    }
    try {
      await this.client.send(new UpdateCommand(release));
      return 'released';
    } catch (error) {
      if (isConditionalCheckFailed(error)) return 'superseded';
      throw error;
    }
  }

  /** @inheritdoc */
  async forget(company: string, deviceId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tables.presence, Key: { deviceKey: presenceKey(company, deviceId) } }));
  }
}
