/** The audit log's entries and listing (`GET /admin/audit`). */
import * as z from 'zod';
import { AUDIT_ACTIONS } from '../../core/audit/ports.js';
import { IDENTIFIER_PATTERN, ULID_PATTERN } from '../../core/shared/identifiers.js';

const values = z
  .record(z.string(), z.unknown())
  .describe(
    "The target's values: a company's `id`, `name`, `quotaBytes`; a user's view (never a password); an API client's view (never a secret or its hash).",
  );

/** One administrative change. */
export const AuditEntry = z
  .object({
    id: z.string().regex(ULID_PATTERN).describe('ULID of the entry: unique, and sorts by time.'),
    at: z.iso.datetime({ offset: true }).describe('When the change was made (ISO-8601, UTC).'),
    actor: z.string().describe("The username of who made the change (the token's `username`, else its `sub`)."),
    action: z.enum(AUDIT_ACTIONS).describe('What the change was.'),
    target: z
      .object({
        kind: z.enum(['company', 'user', 'webhook', 'api-client']).describe('What was changed.'),
        id: z.string().describe('The company id, the username, the webhook id, or the API client id.'),
      })
      .strict(),
    companies: z
      .array(z.string().regex(IDENTIFIER_PATTERN))
      .describe("The companies the change concerns: a company's own id; a user's companies before and after."),
    before: values.optional().describe("The target's values before the change; absent for a creation."),
    after: values.optional().describe("The target's values after the change; absent for a deletion."),
  })
  .strict()
  .meta({ id: 'AuditEntry', description: 'One administrative change: who changed what, when, with the values before and after.' });

/** A page of the audit log. */
export const AuditPage = z
  .object({
    items: z.array(AuditEntry).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'AuditPage' });
