import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Company, CompanyRepository } from '../../core/shared/companies.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import type { TableNames } from './dynamodb-shared.js';

/** CompanyRepository on the companies table. */
export class DynamoDbCompanyRepository implements CompanyRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: TableNames,
  ) {}

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
