/**
 * Reading the audit log (docs/contract.md, "Audit"): a platform administrator reads every entry; a company
 * administrator (`users:read` without the platform role) only the entries concerning one of their companies, named.
 */
import { isPlatformAdmin } from '../access/roles.js';
import { ForbiddenError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorize, type Principal } from '../shared/principal.js';
import type { AuditEntry, AuditFilter, AuditLog } from './ports.js';

/** The ports of listAudit. */
export interface AuditReadPorts {
  audit: AuditLog;
}

/**
 * A page of the entries matching `filter`, newest first. A platform administrator (a token holding exactly the
 * `platform-admin` role's scopes) may list every entry; anyone else holding `users:read` must name one of their
 * companies in `filter.company`.
 * @throws ForbiddenError without `users:read`, or when a caller other than a platform administrator names no company
 *   or one not theirs; BadRequestError on a cursor this listing did not issue.
 */
export async function listAudit(
  ports: AuditReadPorts,
  principal: Principal,
  filter: AuditFilter,
  paging: ListParameters,
): Promise<Page<AuditEntry>> {
  authorize(principal, 'users:read');
  if (!isPlatformAdmin(principal.scopes)) {
    if (filter.company === undefined) {
      throw new ForbiddenError(
        `Name one of your companies with 'company' (${principal.companies.join(', ') || 'the token names none'}): only a platform administrator reads every company's entries.`,
      );
    }
    if (!principal.companies.includes(filter.company)) {
      throw new ForbiddenError(
        `The token does not grant access to company '${filter.company}'; name one of your companies with 'company'.`,
      );
    }
  }
  return ports.audit.list(filter, paging.limit, paging.cursor);
}
