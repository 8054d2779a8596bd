import { type DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CompanyAdministration, CompanyChanges } from '../../core/companies/ports.js';
import type { Company, CompanyRepository } from '../../core/shared/companies.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import { isConditionalCheckFailed, type TableNames } from './dynamodb-shared.js';

/** The listing a companies cursor is bound to: every company (no company, no filter). */
const COMPANIES_LISTING = cursorListing('companies', '');

/** CompanyRepository and CompanyAdministration on the companies table. */
export class DynamoDbCompanyRepository implements CompanyRepository, CompanyAdministration {
  /** @param cursors signs the listing's cursors; only `list` needs it (and the key it reads on first use). */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
    private readonly cursors?: CursorCodec,
  ) {}

  /** @inheritdoc */
  async create(company: Omit<Company, 'usedBytes'>): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tables.companies,
          Item: { companyId: company.id, name: company.name, quotaBytes: company.quotaBytes, usedBytes: 0 },
          ConditionExpression: 'attribute_not_exists(companyId)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * @inheritdoc
   * The table is keyed by `companyId` alone, so listing every company is a paginated Scan: a page reads `limit + 1`
   * items (the extra one tells whether another page follows). Companies are few (one item each, ~100 bytes), so a
   * page costs a few read units; nothing else scans this table.
   */
  async list(limit: number, cursor: string | undefined): Promise<Page<Company>> {
    if (this.cursors === undefined) throw new Error('DynamoDbCompanyRepository.list needs the cursor codec');
    let startKey: Record<string, unknown> | undefined;
    if (cursor !== undefined) {
      const key = this.cursors.decode(COMPANIES_LISTING, cursor);
      if (typeof key.companyId !== 'string' || !IDENTIFIER_PATTERN.test(key.companyId) || Object.keys(key).length !== 1) {
        throw invalidCursor();
      }
      startKey = { companyId: key.companyId };
    }
    const response = await this.client.send(
      new ScanCommand({
        TableName: this.tables.companies,
        ConsistentRead: true,
        Limit: limit + 1,
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    const found = response.Items ?? [];
    const items = found.slice(0, limit).map(toCompany);
    const last = items.at(-1);
    const more = found.length > limit || response.LastEvaluatedKey !== undefined;
    return { items, nextCursor: more && last !== undefined ? this.cursors.encode(COMPANIES_LISTING, { companyId: last.id }) : null };
  }

  /** @inheritdoc */
  async update(companyId: string, changes: CompanyChanges): Promise<Company | undefined> {
    const sets: string[] = [];
    const values: Record<string, unknown> = {};
    const names: Record<string, string> = {};
    if (changes.name !== undefined) {
      // `name` is a DynamoDB reserved word.
      sets.push('#name = :name');
      names['#name'] = 'name';
      values[':name'] = changes.name;
    }
    if (changes.quotaBytes !== undefined) {
      sets.push('quotaBytes = :quota');
      values[':quota'] = changes.quotaBytes;
    }
    if (sets.length === 0) return this.get(companyId);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tables.companies,
          Key: { companyId },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(companyId)',
          ...(Object.keys(names).length === 0 ? {} : { ExpressionAttributeNames: names }),
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes === undefined ? undefined : toCompany(Attributes);
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /** @inheritdoc */
  async get(companyId: string): Promise<Company | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tables.companies, Key: { companyId }, ConsistentRead: true }));
    return Item === undefined ? undefined : toCompany(Item);
  }

  /** @inheritdoc */
  async getMany(companyIds: readonly string[]): Promise<Company[]> {
    if (companyIds.length === 0) return [];
    const items = await batchGetAll(
      this.client,
      this.tables.companies,
      [...new Set(companyIds)].map((companyId) => ({ companyId })),
      ['companyId', 'name', 'quotaBytes', 'usedBytes'],
    );
    return items.map(toCompany);
  }

  /** Creates or replaces companies (seeding). */
  async put(companies: readonly Company[]): Promise<void> {
    await batchPutAll(
      this.client,
      this.tables.companies,
      companies.map(({ id, ...rest }) => ({ companyId: id, ...rest })),
    );
  }
}

function toCompany(item: Record<string, unknown>): Company {
  return {
    id: item.companyId as string,
    name: item.name as string,
    quotaBytes: Number(item.quotaBytes),
    usedBytes: Number(item.usedBytes ?? 0),
  };
}
