import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AlertTableChange } from '../../core/alerts/changes.js';
import type { Alert, AlertState, AlertWatch } from '../../core/alerts/model.js';
import type { AlertStore, DueEntry, WatchOutcome } from '../../core/alerts/ports.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { ruleFromItem, rulePartition } from './dynamodb-alert-rule-store.js';
import { cancellationCodes, type DueIndex, dueItemsByShardOrder, sendTransaction } from './dynamodb-shared.js';
import type { StreamImage } from './stream-images.js';
import { ALERT_DUE_SHARDS, alertDueShardOf } from './tables.js';

/** The alerts table's sparse index of watches not raised yet and of rules' rechecks, by due time. */
const DUE_INDEX: DueIndex = { name: 'due', shardKey: 'dueShard', dueKey: 'dueAt' };

/** Query rounds a filtered alerts page reads at most before it answers what it found (with a cursor). */
const MAX_LISTING_ROUNDS = 10;

/** Watches a page of watchesOf holds. */
const WATCH_PAGE = 100;

const watchPartition = (company: string, ruleId: string) => `WATCH#${company}#${ruleId}`;
const alertPartition = (company: string) => `ALERT#${company}`;
const alertsListing = (company: string, state: AlertState | undefined) => cursorListing('alerts', company, state);

/** The item of a watch: in the `due` index while it has a `dueAt` and is not raised. */
function watchItem(watch: AlertWatch): Record<string, unknown> {
  const pk = watchPartition(watch.company, watch.ruleId);
  const due = watch.dueAt !== undefined && watch.openAlertId === undefined;
  return { ...watch, pk, sk: watch.deviceId, ...(due ? { dueShard: alertDueShardOf(`${pk}#${watch.deviceId}`) } : {}) };
}

/** The watch an item holds. */
function watchFromItem(item: Record<string, unknown>): AlertWatch {
  const optional = (name: string) => (typeof item[name] === 'string' ? { [name]: item[name] as string } : {});
  return {
    company: item.company as string,
    ruleId: item.ruleId as string,
    revision: item.revision as string,
    deviceId: item.deviceId as string,
    since: item.since as string,
    detail: item.detail as string,
    ...optional('subId'),
    ...optional('episode'),
    ...optional('dueAt'),
    ...optional('openAlertId'),
  };
}

/** The alert an item (or an unmarshalled stream image) holds. */
export function alertFromItem(item: Record<string, unknown>): Alert {
  const target = item.target as Alert['target'];
  return {
    id: item.id as string,
    company: item.company as string,
    ruleId: item.ruleId as string,
    ruleName: item.ruleName as string,
    target: { type: 'DEVICE', id: target.id, ...(target.subId === undefined ? {} : { subId: target.subId }) },
    state: item.state as AlertState,
    raisedAt: item.raisedAt as string,
    ...(typeof item.resolvedAt === 'string' ? { resolvedAt: item.resolvedAt } : {}),
    detail: item.detail as string,
  };
}

/**
 * The change a record of the alerts table makes (its stream images): an alert's, a rule's, or undefined for the
 * other items (watches, the rules' count).
 */
export function alertTableChangeOf(oldImage: StreamImage, newImage: StreamImage): AlertTableChange | undefined {
  const before = oldImage === undefined ? undefined : unmarshall(oldImage);
  const after = newImage === undefined ? undefined : unmarshall(newImage);
  const pk = ((after ?? before)?.pk as string | undefined) ?? '';
  if (pk.startsWith('ALERT#')) {
    return {
      kind: 'alert',
      ...(before === undefined ? {} : { before: alertFromItem(before) }),
      ...(after === undefined ? {} : { after: alertFromItem(after) }),
    };
  }
  const [old, next] = [before === undefined ? undefined : ruleFromItem(before), after === undefined ? undefined : ruleFromItem(after)];
  const rule = next ?? old;
  if (!pk.startsWith('RULE#') || rule === undefined) return undefined;
  return {
    kind: 'rule',
    company: rule.company,
    ruleId: rule.id,
    ...(old === undefined ? {} : { before: old }),
    ...(next === undefined ? {} : { after: next }),
  };
}

/**
 * AlertStore on the alerts table (key design in tables.ts): each raise, start and end of a watch is one transaction,
 * conditional on the rule's revision and on the watch being as read, so replays and races write nothing twice.
 */
export class DynamoDbAlertStore implements AlertStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly cursors: CursorCodec,
  ) {}

  /** @inheritdoc */
  async watch(company: string, ruleId: string, deviceId: string): Promise<AlertWatch | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.table, Key: { pk: watchPartition(company, ruleId), sk: deviceId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : watchFromItem(Item);
  }

  /** The check that the rule is still at the watch's revision. */
  private ruleCheck(watch: AlertWatch) {
    return {
      ConditionCheck: {
        TableName: this.table,
        Key: { pk: rulePartition(watch.company), sk: watch.ruleId },
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: { ':revision': watch.revision },
      },
    };
  }

  /** Sends a transaction; a refused condition is `skipped`. */
  private async conditional(items: Record<string, unknown>[]): Promise<WatchOutcome> {
    try {
      await sendTransaction(this.client, { TransactItems: items as never });
      return 'written';
    } catch (error) {
      if (cancellationCodes(error)?.includes('ConditionalCheckFailed')) return 'skipped';
      throw error;
    }
  }

  /** @inheritdoc */
  startWatch(watch: AlertWatch): Promise<WatchOutcome> {
    return this.conditional([
      this.ruleCheck(watch),
      { Put: { TableName: this.table, Item: watchItem(watch), ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
  }

  /** @inheritdoc */
  raise(watch: AlertWatch, alert: Alert, existing: boolean): Promise<WatchOutcome> {
    const key = { pk: watchPartition(watch.company, watch.ruleId), sk: watch.deviceId };
    const { dueAt: _dueAt, ...raised } = watch;
    const watchWrite = existing
      ? {
          Update: {
            TableName: this.table,
            Key: key,
            UpdateExpression: 'SET openAlertId = :alert REMOVE dueShard, dueAt',
            ConditionExpression: 'since = :since AND attribute_not_exists(openAlertId)',
            ExpressionAttributeValues: { ':alert': alert.id, ':since': watch.since },
          },
        }
      : {
          Put: {
            TableName: this.table,
            Item: watchItem({ ...raised, openAlertId: alert.id }),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        };
    const alertPut = {
      Put: {
        TableName: this.table,
        Item: { ...alert, pk: alertPartition(alert.company), sk: alert.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
    return this.conditional([this.ruleCheck(watch), watchWrite, alertPut]);
  }

  /** @inheritdoc */
  async resolve(watch: AlertWatch, at: string): Promise<WatchOutcome> {
    const open = watch.openAlertId;
    const deleteWatch = {
      Delete: {
        TableName: this.table,
        Key: { pk: watchPartition(watch.company, watch.ruleId), sk: watch.deviceId },
        ConditionExpression: `since = :since AND ${open === undefined ? 'attribute_not_exists(openAlertId)' : 'openAlertId = :alert'}`,
        ExpressionAttributeValues: { ':since': watch.since, ...(open === undefined ? {} : { ':alert': open }) },
      },
    };
    if (open === undefined) return this.conditional([deleteWatch]);
    const resolveAlert = {
      Update: {
        TableName: this.table,
        Key: { pk: alertPartition(watch.company), sk: open },
        UpdateExpression: 'SET #state = :resolved, resolvedAt = if_not_exists(resolvedAt, :at)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':resolved': 'RESOLVED', ':at': at },
      },
    };
    try {
      await sendTransaction(this.client, { TransactItems: [deleteWatch, resolveAlert] as never });
      return 'written';
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw error;
      // The alert is gone (deleted by hand): the watch is ended alone, rather than refused for ever.
      if (codes[0] !== 'ConditionalCheckFailed' && codes[1] === 'ConditionalCheckFailed') return this.conditional([deleteWatch]);
      if (codes.includes('ConditionalCheckFailed')) return 'skipped';
      throw error;
    }
  }

  /** @inheritdoc */
  async due(now: string, limit: number): Promise<DueEntry[]> {
    const items = await dueItemsByShardOrder(this.client, this.table, DUE_INDEX, { prefix: 'DUE', count: ALERT_DUE_SHARDS }, now, limit);
    return items.flatMap((item): DueEntry[] => {
      const rule = ruleFromItem(item);
      if (rule !== undefined) return [{ kind: 'recheck', company: rule.company, ruleId: rule.id, revision: rule.revision }];
      const { company, ruleId, deviceId, since, revision } = watchFromItem(item);
      return [{ kind: 'watch', company, ruleId, deviceId, since, revision }];
    });
  }

  /** @inheritdoc */
  async watchesOf(company: string, ruleId: string, cursor: string | undefined): Promise<{ items: AlertWatch[]; cursor?: string }> {
    const pk = watchPartition(company, ruleId);
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        Limit: WATCH_PAGE,
        ...(cursor === undefined ? {} : { ExclusiveStartKey: { pk, sk: cursor } }),
      }),
    );
    const next = page.LastEvaluatedKey?.sk as string | undefined;
    return { items: (page.Items ?? []).map(watchFromItem), ...(next === undefined ? {} : { cursor: next }) };
  }

  /** @inheritdoc */
  async listAlerts(company: string, state: AlertState | undefined, limit: number, cursor: string | undefined): Promise<Page<Alert>> {
    const pk = alertPartition(company);
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(alertsListing(company, state), cursor);
      if (typeof key.sk !== 'string' || !ULID_PATTERN.test(key.sk) || Object.keys(key).length !== 1) throw invalidCursor();
      startKey = { pk, sk: key.sk };
    }
    const found: Record<string, unknown>[] = [];
    for (let round = 0; round < MAX_LISTING_ROUNDS; round += 1) {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ScanIndexForward: false,
          // One extra item tells whether another page exists, so the last page carries no cursor.
          Limit: state === undefined ? limit + 1 : Math.max(limit + 1, 100),
          ...(state === undefined
            ? { ExpressionAttributeValues: { ':pk': pk } }
            : {
                FilterExpression: '#state = :state',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':pk': pk, ':state': state },
              }),
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      found.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
      if (found.length > limit || startKey === undefined) break;
    }
    const items = found.slice(0, limit).map(alertFromItem);
    const resumeAt = found.length > limit ? items.at(-1)?.id : (startKey?.sk as string | undefined);
    return { items, nextCursor: resumeAt === undefined ? null : this.cursors.encode(alertsListing(company, state), { sk: resumeAt }) };
  }

  /** @inheritdoc */
  async getAlert(company: string, alertId: string): Promise<Alert | undefined> {
    if (!ULID_PATTERN.test(alertId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.table, Key: { pk: alertPartition(company), sk: alertId }, ConsistentRead: true }),
    );
    return Item === undefined ? undefined : alertFromItem(Item);
  }
}
