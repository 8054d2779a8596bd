import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { RecordVersionGuards, RecordVersionOutcome, ScenarioVersion, StagedArchive } from '../../core/scenarios/model.js';
import type { ScenarioRepository } from '../../core/scenarios/ports.js';
import { batchGetAll } from './dynamodb-batch.js';
import { cancellationCodes, isConditionalCheckFailed, overdueItems, sendTransaction, type TableNames } from './dynamodb-shared.js';
import { sweepShardOf } from './tables.js';

/** Attempts of a version record whose quota charge failed because the quota changed since it was read. */
const QUOTA_CHANGE_ATTEMPTS = 3;

/** ScenarioRepository on the scenarios table, with quota accounting on the companies table. */
export class DynamoDbScenarioRepository implements ScenarioRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

  /**
   * @inheritdoc
   * The quota charge is conditional on the quota read first: when an administrator changes the quota in between
   * (PATCH /admin/companies/{companyId}), the charge fails though the archive may fit; the record is then tried again
   * against the new quota (nothing was written), up to QUOTA_CHANGE_ATTEMPTS times, and refused only when it does not fit.
   */
  async recordVersion(version: ScenarioVersion, guards?: RecordVersionGuards): Promise<RecordVersionOutcome> {
    let company = await this.company(version.company);
    for (let attempt = 1; ; attempt += 1) {
      if (company === undefined) return { kind: 'company-not-found' };
      const quotaBytes = Number(company.quotaBytes);
      try {
        await sendTransaction(this.client, { TransactItems: recordVersionItems(this.tables, version, quotaBytes, guards) });
        return { kind: 'stored' };
      } catch (error) {
        const codes = cancellationCodes(error);
        if (codes === undefined) throw error;
        if (codes[4] === 'ConditionalCheckFailed') return { kind: 'claim-lost' };
        if (codes[3] === 'ConditionalCheckFailed') return { kind: 'staging-abandoned' };
        if (codes[0] === 'ConditionalCheckFailed') return { kind: 'version-exists' };
        if (codes[1] !== 'ConditionalCheckFailed') throw error;
        const current = await this.company(version.company);
        if (current !== undefined && Number(current.quotaBytes) !== quotaBytes && attempt < QUOTA_CHANGE_ATTEMPTS) {
          company = current;
          continue;
        }
        return {
          kind: 'quota-exceeded',
          quotaBytes: Number(current?.quotaBytes ?? quotaBytes),
          usedBytes: Number(current?.usedBytes ?? 0),
        };
      }
    }
  }

  /** The company's item, read consistently, or undefined. */
  private async company(companyId: string): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tables.companies, Key: { companyId }, ConsistentRead: true }));
    return Item;
  }

  /** @inheritdoc */
  async stageArchive(staged: StagedArchive): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tables.scenarios,
        Item: { ...staged, sk: `STAGED#${staged.stagedId}`, entity: 'STAGED_ARCHIVE', sweepShard: sweepShardOf('STAGED', staged.stagedId) },
        ConditionExpression: 'attribute_not_exists(sk)',
      }),
    );
  }

  /** @inheritdoc */
  async discardStagedArchive(company: string, stagedId: string): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tables.scenarios, Key: { company, sk: `STAGED#${stagedId}` } }));
  }

  /** @inheritdoc */
  async abandonStagedArchive(company: string, stagedId: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tables.scenarios,
          Key: { company, sk: `STAGED#${stagedId}` },
          UpdateExpression: 'SET abandoned = :true',
          ConditionExpression: 'attribute_exists(sk)',
          ExpressionAttributeValues: { ':true': true },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /** @inheritdoc */
  async overdueStagedArchives(now: string, limit: number): Promise<StagedArchive[]> {
    const items = await overdueItems(this.client, this.tables.scenarios, 'STAGED', now, limit);
    return items.map((item) => ({
      company: item.company as string,
      stagedId: item.stagedId as string,
      archiveKey: item.archiveKey as string,
      created: item.created as string,
      sweepAt: item.sweepAt as string,
      ...(item.abandoned === true ? { abandoned: true } : {}),
    }));
  }

  /** @inheritdoc */
  async existingVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<Set<string>> {
    if (references.length === 0) return new Set();
    const keys = [...new Set(references.map((reference) => `VERSION#${reference.scenarioId}#${reference.version}`))].map((sk) => ({
      company: companyId,
      sk,
    }));
    const items = await batchGetAll(this.client, this.tables.scenarios, keys, ['scenarioId', 'version']);
    return new Set(items.map((item) => `${item.scenarioId as string}#${item.version as string}`));
  }
}

/** One write of a DynamoDB transaction. */
type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/**
 * The transaction recording a version, in this order (recordVersion reads the cancellation reasons by index): the
 * version put (0), the quota charge (1), the scenario update (2), then with guards the staging record's delete (3)
 * and with a slot its move to STORED (4).
 */
function recordVersionItems(
  tables: TableNames,
  version: ScenarioVersion,
  quotaBytes: number,
  guards: RecordVersionGuards | undefined,
): TransactItem[] {
  return [
    {
      Put: {
        TableName: tables.scenarios,
        Item: { ...version, sk: `VERSION#${version.scenarioId}#${version.version}`, entity: 'SCENARIO_VERSION' },
        ConditionExpression: 'attribute_not_exists(sk)',
      },
    },
    {
      // Charge the quota only if usedBytes + size stays within the quota read above (and the quota is unchanged).
      Update: {
        TableName: tables.companies,
        Key: { companyId: version.company },
        UpdateExpression: 'ADD usedBytes :size',
        ConditionExpression: 'quotaBytes = :quota AND (attribute_not_exists(usedBytes) OR usedBytes <= :ceiling)',
        ExpressionAttributeValues: { ':size': version.size, ':quota': quotaBytes, ':ceiling': quotaBytes - version.size },
      },
    },
    scenarioUpdateItem(tables, version),
    ...(guards === undefined
      ? []
      : [
          {
            // The staging record goes with the version; an abandoned one (the sweeper deletes its object) fails it.
            Delete: {
              TableName: tables.scenarios,
              Key: { company: version.company, sk: `STAGED#${guards.stagedId}` },
              ConditionExpression: 'attribute_exists(sk) AND attribute_not_exists(abandoned)',
            },
          },
        ]),
    ...(guards?.slot === undefined ? [] : [slotStoredItem(tables, version.company, guards.slot)]),
  ];
}

/**
 * Creates or updates the scenario's record: its name, description and last uploaded version (the stored
 * `latestVersion` attribute, read back as lastUploadedVersion), the version appended.
 */
function scenarioUpdateItem(tables: TableNames, version: ScenarioVersion): TransactItem {
  return {
    Update: {
      TableName: tables.scenarios,
      Key: { company: version.company, sk: `SCENARIO#${version.scenarioId}` },
      UpdateExpression:
        'SET entity = :entity, scenarioId = :id, #name = :name, description = :description, latestVersion = :version, ' +
        'versions = list_append(if_not_exists(versions, :empty), :versions), created = if_not_exists(created, :now), updated = :now',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: {
        ':entity': 'SCENARIO',
        ':id': version.scenarioId,
        ':name': version.name,
        ':description': version.description ?? null,
        ':version': version.version,
        ':versions': [version.version],
        ':empty': [],
        ':now': version.created,
      },
    },
  };
}

/** The slot becomes STORED with the version, only under the processor's claim. */
function slotStoredItem(tables: TableNames, company: string, slot: NonNullable<RecordVersionGuards['slot']>): TransactItem {
  return {
    Update: {
      TableName: tables.scenarios,
      Key: { company, sk: `UPLOAD#${slot.uploadId}` },
      UpdateExpression: 'SET #status = :stored, #result = :result, problem = :null REMOVE sweepShard, sweepAt',
      ConditionExpression: '#status = :processing AND claimedAt = :claimedAt',
      ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
      ExpressionAttributeValues: {
        ':stored': 'STORED',
        ':result': slot.result,
        ':null': null,
        ':processing': 'PROCESSING',
        ':claimedAt': slot.claimedAt,
      },
    },
  };
}
