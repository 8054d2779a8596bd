/** The audit log of administrative changes (docs/contract.md, "Audit"): the composition root's side of the audit table. */
import { createDocumentClient } from '../../adapters/aws/clients.js';
import { CursorCodec } from '../../adapters/aws/cursor-codec.js';
import { DynamoDbAuditLog } from '../../adapters/aws/dynamodb-audit-log.js';
import { DynamoDbCompanyRepository } from '../../adapters/aws/dynamodb-company-repository.js';
import type { AuditLog } from '../../core/audit/ports.js';
import type { CompanyAdministration } from '../../core/companies/ports.js';
import { auditConfig, cursorSigningKey } from '../config.js';
import { traced } from '../observability.js';
import { storage } from './storage.js';

let audit: DynamoDbAuditLog | undefined;

/**
 * The audit log (built once) on AUDIT_TABLE, with its own document client: a function records entries with
 * `tables: { audit: 'W' }` (or 'RW', which listing needs, with `pagesListings` for CURSOR_SIGNING_KEY, read on the
 * first cursor) and needs no other storage variable.
 * @throws EnvironmentError when AUDIT_TABLE is not set (or DYNAMODB_ENDPOINT is not a URL).
 */
export function auditLog(): AuditLog {
  if (audit === undefined) {
    const config = auditConfig();
    audit = new DynamoDbAuditLog(
      traced(createDocumentClient(config.dynamoDbEndpoint)),
      config.tableName,
      new CursorCodec(cursorSigningKey),
    );
  }
  return audit;
}

let companies: CompanyAdministration | undefined;

/**
 * Companies administration (built once): storage()'s companies table, client and cursors, each change written in one
 * transaction with its audit entry on AUDIT_TABLE.
 * @throws EnvironmentError when a storage variable or AUDIT_TABLE is missing or malformed.
 */
export function companyAdministration(): CompanyAdministration {
  if (companies === undefined) {
    const { dynamoDb, tables, cursors } = storage();
    companies = new DynamoDbCompanyRepository(dynamoDb, tables, cursors, auditConfig().tableName);
  }
  return companies;
}
