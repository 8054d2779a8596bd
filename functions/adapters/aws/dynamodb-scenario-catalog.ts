import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BadRequestError } from '../../core/errors.js';
import type { Page, ScenarioCatalog, ScenarioSummary, ScenarioVersion } from '../../core/ports.js';
import type { TableNames } from './dynamodb-repositories.js';

const SCENARIO_PREFIX = 'SCENARIO#';
const VERSION_PREFIX = 'VERSION#';

/** Opaque cursor: base64url of the LastEvaluatedKey `{ company, sk }` of the page's last item. */
function encodeCursor(key: { company: unknown; sk: unknown } | undefined): string | null {
  return key === undefined ? null : Buffer.from(JSON.stringify({ company: key.company, sk: key.sk })).toString('base64url');
}

/**
 * Decodes a cursor issued by `encodeCursor` for this listing: exactly `{ company, sk }`, the caller's company, an sk
 * of this listing's item kind. A cursor forged to point into another company or at other items is refused.
 * @throws BadRequestError (400) otherwise.
 */
function decodeCursor(cursor: string, company: string, skPrefix: string): Record<string, unknown> {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (key !== null && typeof key === 'object' && !Array.isArray(key)) {
      const record = key as Record<string, unknown>;
      if (
        record.company === company && typeof record.sk === 'string' && record.sk.startsWith(skPrefix) &&
        record.sk.length > skPrefix.length && Object.keys(record).length === 2
      ) {
        return { company: record.company, sk: record.sk };
      }
    }
  } catch {
    // fall through
  }
  throw new BadRequestError("'cursor' is not a cursor issued for this listing.", [{ path: 'cursor', message: 'unknown or tampered cursor' }]);
}

/** Identifiers and versions never contain `#` (the key separator); one that does addresses nothing. */
const addressable = (...parts: string[]): boolean => parts.every((part) => part !== '' && !part.includes('#'));

function toSummary(item: Record<string, unknown>): ScenarioSummary {
  return {
    company: item.company as string,
    scenarioId: item.scenarioId as string,
    name: item.name as string,
    ...(typeof item.description === 'string' ? { description: item.description } : {}),
    latestVersion: item.latestVersion as string,
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
 * partition, never a Scan; `UPLOAD#` items of the same partition are never read.
 */
export class DynamoDbScenarioCatalog implements ScenarioCatalog {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly tables: Pick<TableNames, 'scenarios'>) {}

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
        ...(cursor === undefined ? {} : { ExclusiveStartKey: decodeCursor(cursor, companyId, SCENARIO_PREFIX) }),
      }),
    );
    const found = response.Items ?? [];
    const pageItems = found.slice(0, limit);
    const last = pageItems.at(-1);
    const nextKey = found.length > limit && last !== undefined ? { company: last.company, sk: last.sk } : undefined;
    return { items: pageItems.map(toSummary), nextCursor: encodeCursor(nextKey) };
  }

  /** @inheritdoc */
  async getScenario(companyId: string, scenarioId: string): Promise<ScenarioSummary | undefined> {
    if (!addressable(scenarioId)) return undefined;
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tables.scenarios, Key: { company: companyId, sk: `${SCENARIO_PREFIX}${scenarioId}` }, ConsistentRead: true }),
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
}
