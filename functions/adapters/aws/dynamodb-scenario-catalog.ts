import { type DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ScenarioSummary, ScenarioVersion } from '../../core/scenarios/model.js';
import type { ScenarioCatalog } from '../../core/scenarios/ports.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchGetAll } from './dynamodb-batch.js';
import type { TableNames } from './dynamodb-shared.js';

const SCENARIO_PREFIX = 'SCENARIO#';
const VERSION_PREFIX = 'VERSION#';

/** Name of this listing in its cursors (cursorListing). */
const SCENARIOS_LISTING = 'scenarios';

/**
 * The signed cursor after `sk`, for the company's scenario listing. Only the sort key is carried: the partition is the
 * caller's company.
 */
function encodeCursor(cursors: CursorCodec, company: string, sk: unknown): string {
  return cursors.encode(cursorListing(SCENARIOS_LISTING, company), { sk });
}

/**
 * The ExclusiveStartKey of a cursor `encodeCursor` issued for this company's listing. Besides the signature, the sort
 * key must be a scenario summary's (defence in depth: a key of another item kind is refused even if signed).
 * @throws BadRequestError (400) otherwise.
 */
function decodeCursor(cursors: CursorCodec, cursor: string, company: string): Record<string, unknown> {
  const key = cursors.decode(cursorListing(SCENARIOS_LISTING, company), cursor);
  const sk = key.sk;
  if (typeof sk !== 'string' || !sk.startsWith(SCENARIO_PREFIX) || sk.length === SCENARIO_PREFIX.length || Object.keys(key).length !== 1) {
    throw invalidCursor();
  }
  return { company, sk };
}

/** Identifiers and versions never contain `#` (the key separator); one that does addresses nothing. */
const addressable = (...parts: string[]): boolean => parts.every((part) => part !== '' && !part.includes('#'));

function toSummary(item: Record<string, unknown>): ScenarioSummary {
  return {
    company: item.company as string,
    scenarioId: item.scenarioId as string,
    name: item.name as string,
    ...(typeof item.description === 'string' ? { description: item.description } : {}),
    // Stored as `latestVersion` (the last upload); the name is kept so stored items read the same.
    lastUploadedVersion: item.latestVersion as string,
    versions: Array.isArray(item.versions) ? (item.versions as string[]) : [],
    created: item.created as string,
    updated: item.updated as string,
  };
}

function toVersion(item: Record<string, unknown>): ScenarioVersion {
  return {
    company: item.company as string,
    scenarioId: item.scenarioId as string,
    version: item.version as string,
    name: item.name as string,
    ...(typeof item.description === 'string' ? { description: item.description } : {}),
    size: Number(item.size),
    sha256: item.sha256 as string,
    archiveKey: item.archiveKey as string,
    uploadedBy: item.uploadedBy as string,
    created: item.created as string,
  };
}

/**
 * ScenarioCatalog on the scenarios table (key design in tables.ts): summaries are `SCENARIO#{id}` items, versions
 * `VERSION#{id}#{version}` items, both under pk `company`. Every read is a GetItem or a Query on the company's
 * partition, never a Scan; `UPLOAD#` items of the same partition are never read. Listing cursors are signed by
 * `cursors` (CursorCodec).
 */
export class DynamoDbScenarioCatalog implements ScenarioCatalog {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: Pick<TableNames, 'scenarios'>,
    private readonly cursors: CursorCodec,
  ) {}

  /** @inheritdoc */
  async listScenarios(companyId: string, limit: number, cursor: string | undefined): Promise<Page<ScenarioSummary>> {
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tables.scenarios,
        KeyConditionExpression: 'company = :company AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':company': companyId, ':prefix': SCENARIO_PREFIX },
        // One extra item tells whether another page exists, so the last page carries no cursor.
        Limit: limit + 1,
        ConsistentRead: true,
        ...(cursor === undefined ? {} : { ExclusiveStartKey: decodeCursor(this.cursors, cursor, companyId) }),
      }),
    );
    const found = response.Items ?? [];
    const pageItems = found.slice(0, limit);
    const last = pageItems.at(-1);
    const nextCursor = found.length > limit && last !== undefined ? encodeCursor(this.cursors, companyId, last.sk) : null;
    return { items: pageItems.map(toSummary), nextCursor };
  }

  /** @inheritdoc */
  async getScenario(companyId: string, scenarioId: string): Promise<ScenarioSummary | undefined> {
    if (!addressable(scenarioId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tables.scenarios,
        Key: { company: companyId, sk: `${SCENARIO_PREFIX}${scenarioId}` },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : toSummary(Item);
  }

  /**
   * @inheritdoc
   * One Query on `begins_with(sk, "VERSION#{id}#")`; the `#` terminator keeps `acme` from matching `acme-2`'s
   * versions. Follows LastEvaluatedKey only if the versions exceed DynamoDB's 1 MB page.
   */
  async listVersions(companyId: string, scenarioId: string): Promise<ScenarioVersion[]> {
    if (!addressable(scenarioId)) return [];
    const versions: ScenarioVersion[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.tables.scenarios,
          KeyConditionExpression: 'company = :company AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':company': companyId, ':prefix': `${VERSION_PREFIX}${scenarioId}#` },
          ConsistentRead: true,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      for (const item of response.Items ?? []) versions.push(toVersion(item));
      startKey = response.LastEvaluatedKey;
    } while (startKey !== undefined);
    return versions;
  }

  /** @inheritdoc */
  async getVersion(companyId: string, scenarioId: string, version: string): Promise<ScenarioVersion | undefined> {
    if (!addressable(scenarioId, version)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tables.scenarios,
        Key: { company: companyId, sk: `${VERSION_PREFIX}${scenarioId}#${version}` },
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : toVersion(Item);
  }

  /**
   * @inheritdoc
   * BatchGetItem (eventually consistent: versions are immutable once recorded), reading only what a version view
   * needs; unaddressable references are skipped.
   */
  async getVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<ScenarioVersion[]> {
    const keys = [
      ...new Set(
        references
          .filter((ref) => addressable(ref.scenarioId, ref.version))
          .map((ref) => `${VERSION_PREFIX}${ref.scenarioId}#${ref.version}`),
      ),
    ].map((sk) => ({ company: companyId, sk }));
    if (keys.length === 0) return [];
    const items = await batchGetAll(this.client, this.tables.scenarios, keys, [
      'company',
      'scenarioId',
      'version',
      'name',
      'size',
      'sha256',
      'archiveKey',
      'uploadedBy',
      'created',
    ]);
    return items.map(toVersion);
  }
}
