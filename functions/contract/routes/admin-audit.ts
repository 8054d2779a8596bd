/**
 * The audit log on the main address (docs/contract.md, "Audit"): who changed what in administration, newest first. Not
 * company-scoped by path: the use case checks the `company` a company administrator names against their token.
 */
import * as z from 'zod';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { CURRENT_USER_ACTIONS } from '../cognito-attributes.js';
import { pagingParameters, text } from '../parameters.js';
import { defineRoute } from '../route.js';
import { AuditPage } from '../schemas/audit.js';
import { COMPANY_ID_RULE } from '../schemas/companies.js';
import { AUTHENTICATED_PROBLEMS, problem } from '../schemas/responses.js';
import { CURRENT_CALLER_RULE } from '../schemas/users.js';

/** Longest `actor` filter: a username is at most 128 characters. */
const MAX_ACTOR_LENGTH = 128;

/** Query of `GET /admin/audit`: the filters and the paging. */
export const AuditListQuery = z.strictObject({
  company: text('company', 128)
    .regex(IDENTIFIER_PATTERN, { error: COMPANY_ID_RULE })
    .optional()
    .meta({ description: 'Only the entries concerning this company. A company administrator must name one of theirs.' }),
  actor: text('actor', MAX_ACTOR_LENGTH).optional().meta({ description: 'Only the entries of changes this user (username) made.' }),
  ...pagingParameters,
});

/** GET /admin/audit */
export const adminAuditList = defineRoute({
  id: 'AdminAuditList',
  api: 'main',
  method: 'GET',
  path: '/admin/audit',
  summary: 'List the audit log of administrative changes',
  description:
    'The entries of administrative changes (companies created and changed; users invited, changed, deleted, given a new password), newest first, with who made each and the values before and after. `company` keeps the entries concerning that company, `actor` those made by that user; both together, the entries of both. A platform administrator may list every entry; a company administrator must name one of their companies with `company` (403 otherwise). An entry shows in the `actor` listing within about a second of the change (an index). A cursor issued for another listing or other filters gives 400. Needs `users:read`.',
  tags: ['Administration'],
  scope: 'users:read',
  request: { query: AuditListQuery },
  // The caller's own user: the token is bounded by what they are now (a demoted administrator reads nothing).
  access: { storage: false, pagesListings: true, tables: { audit: 'R' }, userPool: CURRENT_USER_ACTIONS },
  entry: 'functions/handlers/admin-audit.ts',
  responses: {
    200: { description: 'A page of entries, newest first.', schema: AuditPage },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: a `limit` out of bounds, a malformed `company`, an unknown parameter, or a cursor this listing did not issue.',
    ),
    403: problem(
      'Forbidden',
      `Forbidden: the token lacks \`users:read\`, or a company administrator named no company or one not theirs. ${CURRENT_CALLER_RULE} On AWS, a token without the scope gets API Gateway's \`{"message":"Forbidden"}\` (application/json).`,
    ),
  },
});
