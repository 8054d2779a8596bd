/** The audit log of administrative changes (docs/contract.md, "Audit"): the composition root's side of the audit table. */
import { createDocumentClient } from '../../adapters/aws/clients.js';
import { CursorCodec } from '../../adapters/aws/cursor-codec.js';
import { DynamoDbAuditLog } from '../../adapters/aws/dynamodb-audit-log.js';
import type { AuditLog } from '../../core/audit/ports.js';
import { auditConfig, cursorSigningKey } from '../config.js';
import { traced } from '../observability.js';

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
