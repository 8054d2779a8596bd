import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import pLimit from 'p-limit';
import type { Command, CommandResult, CommandState } from '../../core/commands/model.js';
import { isPending } from '../../core/commands/model.js';
import type {
  CommandRepository,
  CommandStateChange,
  CommandTransition,
  CommandWriteOutcome,
  OverdueCommand,
} from '../../core/commands/ports.js';
import { DEPLOYMENT_WRITE_CONCURRENCY } from '../../core/deployments/deployments.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchGetAll } from './dynamodb-batch.js';
import { isConditionalCheckFailed, overdueItems, type TableNames } from './dynamodb-shared.js';
import { commandShardOf } from './tables.js';

/** The partition of a device's commands: `{company}#{deviceId}` (neither id contains `#`). */
export function commandPartition(company: string, deviceId: string): string {
  return `${company}#${deviceId}`;
}

const commandsListing = (company: string, deviceId: string) => cursorListing('commands', company, deviceId);

/**
 * The item of a command. `arguments` and a result's `output` are kept as JSON text (`argumentsJson`, `outputJson`):
 * free JSON may hold what DynamoDB's types refuse (numbers of more than 38 digits, empty strings as keys); a pending
 * command carries its `sweep` index keys.
 */
export function commandItem(command: Command): Record<string, unknown> {
  const { arguments: args, result, ...rest } = command;
  const pk = commandPartition(command.company, command.deviceId);
  return {
    ...rest,
    pk,
    sk: command.id,
    argumentsJson: JSON.stringify(args ?? null),
    ...(result === undefined ? {} : { result: resultItem(result) }),
    ...(isPending(command.state) ? { sweepShard: commandShardOf(pk), sweepAt: command.expiresAt } : {}),
  };
}

function resultItem(result: CommandResult): Record<string, unknown> {
  return {
    ...(result.message === undefined ? {} : { message: result.message }),
    ...(result.output === undefined ? {} : { outputJson: JSON.stringify(result.output) }),
  };
}

/** Every attribute commandFromItem reads: the projection of a batched read. */
const COMMAND_ATTRIBUTES = [
  'id',
  'company',
  'deviceId',
  'hub',
  'device',
  'command',
  'argumentsJson',
  'state',
  'created',
  'updated',
  'expiresAt',
  'by',
  'note',
  'result',
  'rollout',
] as const;

/** The command an item holds (the table's item, or a stream image unmarshalled). */
export function commandFromItem(item: Record<string, unknown>): Command {
  const result = item.result as { message?: string; outputJson?: string } | undefined;
  const rollout = item.rollout as { id: string; wave: number } | undefined;
  return {
    id: item.id as string,
    company: item.company as string,
    deviceId: item.deviceId as string,
    hub: item.hub as string,
    device: item.device as string,
    command: item.command as string,
    arguments: JSON.parse((item.argumentsJson as string | undefined) ?? 'null'),
    state: item.state as CommandState,
    created: item.created as string,
    updated: item.updated as string,
    expiresAt: item.expiresAt as string,
    by: item.by as string,
    ...(typeof item.note === 'string' ? { note: item.note } : {}),
    ...(result === undefined
      ? {}
      : {
          result: {
            ...(result.message === undefined ? {} : { message: result.message }),
            ...(result.outputJson === undefined ? {} : { output: JSON.parse(result.outputJson) }),
          },
        }),
    ...(rollout === undefined ? {} : { rollout: { id: rollout.id, wave: Number(rollout.wave) } }),
  };
}

/**
 * CommandRepository on the commands table (key design in tables.ts): every change is one conditional write of one
 * item; its event and the device's desired state tag follow from the table's stream.
 */
export class DynamoDbCommandRepository implements CommandRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
    private readonly cursors: CursorCodec,
  ) {}

  /** @inheritdoc */
  async create(command: Command): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.tables.commands, Item: commandItem(command), ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }

  /**
   * @inheritdoc
   * Conditional PutItems, DEPLOYMENT_WRITE_CONCURRENCY at once: a rollout's chunk writes as many items, as fast, as
   * a deployment rollout's chunk does (one conditional put per write). A BatchWriteItem cannot carry a condition, so it
   * would put a command back to QUEUED when a chunk runs again after its device fetched or answered it.
   */
  async createEach(commands: readonly Command[]): Promise<CommandWriteOutcome[]> {
    const limit = pLimit(DEPLOYMENT_WRITE_CONCURRENCY);
    return Promise.all(
      commands.map((command) =>
        limit(async (): Promise<CommandWriteOutcome> => {
          try {
            await this.create(command);
            return 'created';
          } catch (error) {
            return isConditionalCheckFailed(error) ? 'exists' : 'failed';
          }
        }),
      ),
    );
  }

  /** @inheritdoc */
  async getMany(company: string, keys: readonly { deviceId: string; commandId: string }[]): Promise<Command[]> {
    const valid = keys.filter(({ commandId }) => ULID_PATTERN.test(commandId));
    const items = await batchGetAll(
      this.client,
      this.tables.commands,
      valid.map(({ deviceId, commandId }) => ({ pk: commandPartition(company, deviceId), sk: commandId })),
      [...COMMAND_ATTRIBUTES],
    );
    return items.map(commandFromItem);
  }

  /** @inheritdoc */
  async get(company: string, deviceId: string, commandId: string): Promise<Command | undefined> {
    if (!ULID_PATTERN.test(commandId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tables.commands,
        Key: { pk: commandPartition(company, deviceId), sk: commandId },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : commandFromItem(Item);
  }

  /** @inheritdoc */
  async list(company: string, deviceId: string, limit: number, cursor: string | undefined): Promise<Page<Command>> {
    const pk = commandPartition(company, deviceId);
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(commandsListing(company, deviceId), cursor);
      if (typeof key.sk !== 'string' || !ULID_PATTERN.test(key.sk) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = { pk, sk: key.sk };
    }
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.commands,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
        // One extra item tells whether another page exists, so the last page carries no cursor.
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(commandFromItem);
    const last = items.at(-1);
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return {
      items,
      nextCursor: more && last !== undefined ? this.cursors.encode(commandsListing(company, deviceId), { sk: last.id }) : null,
    };
  }

  /** @inheritdoc */
  async pending(company: string, deviceId: string): Promise<Command[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tables.commands,
          KeyConditionExpression: 'pk = :pk',
          // A filter, not an index: a device's commands are one small partition, and the final ones are few reads more.
          FilterExpression: '#state IN (:queued, :delivered)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':pk': commandPartition(company, deviceId), ':queued': 'QUEUED', ':delivered': 'DELIVERED' },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items.map(commandFromItem);
  }

  /**
   * @inheritdoc
   * One UpdateItem conditioned on the item existing, its state being one of `from` and, when asked, its expiry; a
   * refusal returns the item as stored (ReturnValuesOnConditionCheckFailure), so telling `absent` from `final` costs
   * no read.
   */
  async transition(company: string, deviceId: string, commandId: string, change: CommandStateChange): Promise<CommandTransition> {
    if (!ULID_PATTERN.test(commandId)) return { outcome: 'absent' };
    const names: Record<string, string> = { '#state': 'state', '#updated': 'updated' };
    const values: Record<string, unknown> = { ':to': change.to, ':at': change.at };
    const from = change.from.map((state, index) => {
      values[`:from${index}`] = state;
      return `:from${index}`;
    });
    const conditions = ['attribute_exists(pk)', `#state IN (${from.join(', ')})`];
    if (change.notExpiredAt !== undefined) {
      conditions.push('expiresAt > :notExpiredAt');
      values[':notExpiredAt'] = change.notExpiredAt;
    }
    if (change.expiredAt !== undefined) {
      conditions.push('expiresAt <= :expiredAt');
      values[':expiredAt'] = change.expiredAt;
    }
    const sets = ['#state = :to', '#updated = :at'];
    if (change.result !== undefined) {
      sets.push('#result = :result');
      names['#result'] = 'result';
      values[':result'] = resultItem(change.result);
    }
    const final = !isPending(change.to);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tables.commands,
          Key: { pk: commandPartition(company, deviceId), sk: commandId },
          UpdateExpression: `SET ${sets.join(', ')}${final ? ' REMOVE sweepShard, sweepAt' : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { outcome: 'changed', command: commandFromItem(Attributes as Record<string, unknown>) };
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      // The document client leaves the refused condition's Item marshalled.
      const item = (error as { Item?: Record<string, AttributeValue> } | null)?.Item;
      if (item === undefined) return { outcome: 'absent' };
      return { outcome: 'final', command: commandFromItem(unmarshall(item)) };
    }
  }

  /** @inheritdoc */
  async overdue(now: string, limit: number): Promise<OverdueCommand[]> {
    return (await overdueItems(this.client, this.tables.commands, 'COMMAND', now, limit)).map((item) => ({
      company: item.company as string,
      deviceId: item.deviceId as string,
      commandId: item.id as string,
      expiresAt: item.sweepAt as string,
    }));
  }
}
