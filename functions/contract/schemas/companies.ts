/** Bodies of companies administration (`/admin/companies`). */
import * as z from 'zod';
import {
  MAX_COMPANY_NAME_LENGTH,
  MAX_QUOTA_BYTES,
  NEW_COMPANY_ID_PATTERN,
  NEW_COMPANY_ID_RULE,
  newCompanyIdRefusal,
} from '../../core/companies/admin.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';

/** The rule a company id follows, as a 400 states it. */
export const COMPANY_ID_RULE = 'A company id is 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit.';

/** A company id (IDENTIFIER_PATTERN), as a body member or path parameter. */
export const companyIdentifier = z.string().regex(IDENTIFIER_PATTERN, { error: COMPANY_ID_RULE });

// An empty name fails the pattern alone (one violation, not two).
const name = z
  .string()
  .max(MAX_COMPANY_NAME_LENGTH)
  .regex(/\S/, { error: 'The name must hold a character other than white space.' })
  .describe(`Display name, 1 to ${MAX_COMPANY_NAME_LENGTH} characters.`);

const quotaBytes = z
  .int()
  .min(0)
  .max(MAX_QUOTA_BYTES)
  .describe(`Storage quota for scenario archives, bytes: 0 to ${withThousandsSeparators(MAX_QUOTA_BYTES)} (1 TiB).`);

/** Body of `POST /admin/companies`. */
export const CompanyCreateBody = z
  .strictObject({
    id: z
      .string()
      .regex(NEW_COMPANY_ID_PATTERN, { error: (issue) => newCompanyIdRefusal(String(issue.input)) ?? NEW_COMPANY_ID_RULE })
      .describe(`${NEW_COMPANY_ID_RULE} Fixed for good; companies never differ by case alone.`),
    name,
    quotaBytes,
  })
  .meta({ id: 'CompanyCreateBody', description: 'A new company: its id (fixed for good), display name and storage quota.' });

/** Body of `PATCH /admin/companies/{companyId}`: at least one member. */
export const CompanyUpdateBody = z
  .strictObject({ name: name.optional(), quotaBytes: quotaBytes.optional() })
  .refine((body) => body.name !== undefined || body.quotaBytes !== undefined, {
    error: 'Give `name`, `quotaBytes` or both.',
  })
  .meta({
    id: 'CompanyUpdateBody',
    description: 'What to change (at least one member; the others are kept). A quota below `usedBytes` is accepted.',
  });

const companyFields = {
  id: z.string().regex(IDENTIFIER_PATTERN).describe('Company identifier (the `companies` token claim names it).'),
  name: z.string().describe('Display name.'),
  quotaBytes: z.int().min(0).describe('Storage quota for scenario archives, bytes.'),
  usedBytes: z.int().min(0).describe("Bytes of stored archives (the sum of every stored version's size)."),
  overQuota: z
    .boolean()
    .describe(
      'True when `usedBytes` is above `quotaBytes` (a quota lowered below what is stored): every upload answers 413 until it is raised.',
    ),
};

/** A company as administration answers it (creation, update, listing items). */
export const AdminCompany = z
  .object(companyFields)
  .strict()
  .meta({ id: 'AdminCompany', description: 'A company and its storage account.' });

/** A company with its device and user counts (`GET /admin/companies/{companyId}`). */
export const AdminCompanyDetail = z
  .object({
    ...companyFields,
    deviceCount: z.int().min(0).describe('Devices the company has registered (counted on each request).'),
    userCount: z.int().min(0).describe('Users holding the company (counted on each request).'),
  })
  .strict()
  .meta({ id: 'AdminCompanyDetail', description: 'A company, its storage account, its device count and its user count.' });

/** A page of the companies listing. */
export const AdminCompanyPage = z
  .object({
    items: z.array(AdminCompany).describe('In no meaningful order (the table scan order), each company once across the pages.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'AdminCompanyPage' });
