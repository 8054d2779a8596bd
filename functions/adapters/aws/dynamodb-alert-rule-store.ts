import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AlertCondition, StoredAlertRule } from '../../core/alerts/model.js';
import type { AlertRuleStore } from '../../core/alerts/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import { cancellationCodes, isConditionalCheckFailed, sendTransaction } from './dynamodb-shared.js';
import { alertDueShardOf } from './tables.js';

/** The partition of a company's rules: `RULE#{company}`. */
export function rulePartition(company: string): string {
  return `RULE#${company}`;
}

/** The sort key of a company's rule count, in its rules' partition (never a ULID, so never a rule). */
const RULE_COUNT_SK = '#count';

/**
 * The item of a rule: the rule, its filters as JSON text (field names hold dots, values any text), and while its
 * recheck is pending in the sparse `due` index (`dueShard`, `dueAt`: its `recheckAt`) beside the watches.
 */
export function ruleItem(rule: StoredAlertRule): Record<string, unknown> {
  const { filters, condition, ...rest } = rule;
  const pk = rulePartition(rule.company);
  return {
    ...rest,
    pk,
    sk: rule.id,
    filtersJson: JSON.stringify(filters),
    conditionJson: JSON.stringify(condition),
    ...(rule.recheckAt === undefined ? {} : { dueShard: alertDueShardOf(`${pk}#${rule.id}`), dueAt: rule.recheckAt }),
  };
}

/** The rule an item (or a stream image, unmarshalled) holds, or undefined for another item (the count). */
export function ruleFromItem(item: Record<string, unknown>): StoredAlertRule | undefined {
  if (typeof item.sk !== 'string' || !ULID_PATTERN.test(item.sk) || typeof item.conditionJson !== 'string') return undefined;
  return {
    id: item.id as string,
    company: item.company as string,
    name: item.name as string,
    query: item.query as string,
    condition: JSON.parse(item.conditionJson) as AlertCondition,
    filters: JSON.parse((item.filtersJson as string | undefined) ?? '{}') as Record<string, string[]>,
    revision: item.revision as string,
    ...(typeof item.recheckAt === 'string' ? { recheckAt: item.recheckAt } : {}),
    created: item.created as string,
    updated: item.updated as string,
    by: item.by as string,
  };
}

/**
 * AlertRuleStore on the alerts table (`RULE#{company}` / `{ruleId}`, and the company's count at `#count`): a create
 * or delete is one transaction with the count, so no race passes the limit.
 */
export class DynamoDbAlertRuleStore implements AlertRuleStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** @inheritdoc */
  async create(rule: StoredAlertRule, max: number): Promise<'created' | 'full'> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          { Put: { TableName: this.table, Item: ruleItem(rule), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: this.table,
              Key: { pk: rulePartition(rule.company), sk: RULE_COUNT_SK },
              UpdateExpression: 'ADD #rules :one',
              ConditionExpression: 'attribute_not_exists(#rules) OR #rules < :max',
              ExpressionAttributeNames: { '#rules': 'rules' },
              ExpressionAttributeValues: { ':one': 1, ':max': max },
            },
          },
        ],
      });
      return 'created';
    } catch (error) {
      if (cancellationCodes(error)?.[1] === 'ConditionalCheckFailed') return 'full';
      throw error;
    }
  }

  /** @inheritdoc */
  async list(company: string): Promise<StoredAlertRule[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': rulePartition(company) },
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items.flatMap((item) => ruleFromItem(item) ?? []);
  }

  /** @inheritdoc */
  async get(company: string, ruleId: string): Promise<StoredAlertRule | undefined> {
    if (!ULID_PATTERN.test(ruleId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.table, Key: { pk: rulePartition(company), sk: ruleId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : ruleFromItem(Item);
  }

  /** @inheritdoc */
  async replace(rule: StoredAlertRule, expectedUpdated: string): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.table,
          Item: ruleItem(rule),
          ConditionExpression: '#updated = :expected',
          ExpressionAttributeNames: { '#updated': 'updated' },
          ExpressionAttributeValues: { ':expected': expectedUpdated },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc One UpdateItem removing the recheck time and the `due` index's keys, conditional on the revision. */
  async rechecked(company: string, ruleId: string, revision: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: rulePartition(company), sk: ruleId },
          UpdateExpression: 'REMOVE recheckAt, dueShard, dueAt',
          ConditionExpression: 'revision = :revision',
          ExpressionAttributeValues: { ':revision': revision },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async delete(company: string, ruleId: string): Promise<StoredAlertRule | undefined> {
    const rule = await this.get(company, ruleId);
    if (rule === undefined) return undefined;
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Delete: { TableName: this.table, Key: { pk: rulePartition(company), sk: ruleId }, ConditionExpression: 'attribute_exists(pk)' },
          },
          {
            Update: {
              TableName: this.table,
              Key: { pk: rulePartition(company), sk: RULE_COUNT_SK },
              UpdateExpression: 'ADD #rules :minus',
              ExpressionAttributeNames: { '#rules': 'rules' },
              ExpressionAttributeValues: { ':minus': -1 },
            },
          },
        ],
      });
      return rule;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return undefined;
      throw error;
    }
  }
}
