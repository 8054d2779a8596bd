import { type DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditEntry } from '../../core/audit/ports.js';
import type { CompanyAdministration, CompanyChanges } from '../../core/companies/ports.js';
import type { Company, CompanyRepository } from '../../core/shared/companies.js';
import { ConflictError } from '../../core/shared/errors.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import type { Page } from '../../core/shared/paging.js';
import { type CursorCodec, cursorListing, invalidCursor } from './cursor-codec.js';
import { auditItems } from './dynamodb-audit-log.js';
import { batchGetAll, batchPutAll } from './dynamodb-batch.js';
import { cancellationCodes, sendTransaction, type TableNames } from './dynamodb-shared.js';

/** The listing a companies cursor is bound to: every company (no company, no filter). */
const COMPANIES_LISTING = cursorListing('companies', '');

/**
 * Attempts of a company change whose company changed (or was deleted) between its read and its write: the entry's
 * `before` must be what the change replaced, so the write is conditional on it, and read again when refused.
 */
const UPDATE_ATTEMPTS = 3;

/**
 * CompanyRepository and CompanyAdministration on the companies table. Administration's writes are transactions of the
 * company item and its audit entry's items (auditItems) on the audit table.
 */
export class DynamoDbCompanyRepository implements CompanyRepository, CompanyAdministration {
  /**
   * @param cursors signs the listing's cursors; only `list` needs it (and the key it reads on first use).
   * @param auditTable the audit table's name; only `create` and `update` need it.
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: Pick<TableNames, 'companies'>,
    private readonly cursors?: CursorCodec,
    private readonly auditTable?: string,
  ) {}

  private audited(entry: AuditEntry) {
    if (this.auditTable === undefined) throw new Error('DynamoDbCompanyRepository needs the audit table to change companies');
    return auditItems(this.auditTable, entry);
  }

  /**
   * @inheritdoc
   * One TransactWriteItems: the company put where no item has its id, and the entry's items (each where none is).
   */
  async create(company: Omit<Company, 'usedBytes'>, entry: AuditEntry): Promise<boolean> {
    try {
      await sendTransaction(this.client, {
        TransactItems: [
          {
            Put: {
              TableName: this.tables.companies,
              Item: { companyId: company.id, name: company.name, quotaBytes: company.quotaBytes, usedBytes: 0 },
              ConditionExpression: 'attribute_not_exists(companyId)',
            },
          },
          ...this.audited(entry),
        ],
      });
      return true;
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') return false;
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

  /**
   * @inheritdoc
   * Reads the company (consistently), then one TransactWriteItems: the update, conditional on the name and quota
   * read (so the entry's `before` is what was replaced), and the entry's items. A company changed in between is read
   * again, UPDATE_ATTEMPTS times in all; `usedBytes`, which uploads change, is not part of the condition, and the
   * company returned carries the value read.
   * @throws ConflictError when the company kept changing between read and write.
   */
  async update(
    companyId: string,
    changes: CompanyChanges,
    entryOf: (before: Company, after: Company) => AuditEntry,
  ): Promise<Company | undefined> {
    const sets: string[] = [];
    const values: Record<string, unknown> = {};
    if (changes.name !== undefined) {
      // `name` is a DynamoDB reserved word.
      sets.push('#name = :name');
      values[':name'] = changes.name;
    }
    if (changes.quotaBytes !== undefined) {
      sets.push('quotaBytes = :quota');
      values[':quota'] = changes.quotaBytes;
    }
    if (sets.length === 0) return this.get(companyId);
    for (let attempt = 1; ; attempt += 1) {
      const before = await this.get(companyId);
      if (before === undefined) return undefined;
      const after: Company = {
        ...before,
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.quotaBytes === undefined ? {} : { quotaBytes: changes.quotaBytes }),
      };
      try {
        await sendTransaction(this.client, {
          TransactItems: [
            {
              Update: {
                TableName: this.tables.companies,
                Key: { companyId },
                UpdateExpression: `SET ${sets.join(', ')}`,
                ConditionExpression: 'attribute_exists(companyId) AND #name = :beforeName AND quotaBytes = :beforeQuota',
                ExpressionAttributeNames: { '#name': 'name' },
                ExpressionAttributeValues: { ...values, ':beforeName': before.name, ':beforeQuota': before.quotaBytes },
              },
            },
            ...this.audited(entryOf(before, after)),
          ],
        });
        return after;
      } catch (error) {
        if (cancellationCodes(error)?.[0] !== 'ConditionalCheckFailed') throw error;
        if (attempt >= UPDATE_ATTEMPTS) {
          throw new ConflictError(`Company '${companyId}' kept changing while this change was made; nothing was changed. Try again.`);
        }
      }
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
