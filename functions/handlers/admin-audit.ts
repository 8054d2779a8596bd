import { adminAuditList } from '../contract/routes/admin-audit.js';
import { listAudit } from '../core/audit/admin.js';
import { auditLog } from '../platform/composition/audit.js';
import { userDirectory } from '../platform/composition/users.js';
import { cursorSigningKey } from '../platform/config.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

// At cold start: a function without CURSOR_SIGNING_KEY or AUDIT_TABLE fails its initialization, naming the variable.
cursorSigningKey();
auditLog();

/**
 * GET {base_url}/admin/audit: a page of the audit log (`{ items, nextCursor }`), newest first; every entry for a
 * platform administrator, a named company's for a company administrator.
 */
export const handler = routeHandler(adminAuditList, async ({ query }, { principal }) => {
  const { company, actor, limit, cursor } = query;
  const filter = { ...(company === undefined ? {} : { company }), ...(actor === undefined ? {} : { actor }) };
  return jsonResponse(200, await listAudit({ audit: auditLog(), users: await userDirectory() }, principal, filter, { limit, cursor }));
});
