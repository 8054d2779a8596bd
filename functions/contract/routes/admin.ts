/**
 * Companies administration on the main address (docs/contract.md, "Companies administration"): a platform
 * administrator (`companies:read`, `companies:write`) creates, lists, reads and changes companies. The paths name a
 * company but act on it as a record, not inside it: no `companyParameter`, so the token's `companies` claim does not
 * apply, and the route's scope is the whole permission.
 */
import * as z from 'zod';
import { MAX_COMPANY_NAME_LENGTH, MAX_QUOTA_BYTES } from '../../core/companies/admin.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { CURRENT_USER_ACTIONS, USER_COUNT_ACTIONS } from '../cognito-attributes.js';
import { ListQuery, NoQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import {
  AdminCompany,
  AdminCompanyDetail,
  AdminCompanyPage,
  CompanyCreateBody,
  CompanyUpdateBody,
  companyIdentifier,
} from '../schemas/companies.js';
import { ConflictProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import { CURRENT_CALLER_RULE } from '../schemas/users.js';

/** The companies listing's path, and the parent of each company's. */
export const ADMIN_COMPANIES_PATH = '/admin/companies';
const ADMIN_COMPANY_PATH = `${ADMIN_COMPANIES_PATH}/{companyId}`;

/**
 * What the one function of the four routes may touch: company items (conditional put and update, reads and the
 * listing's Scan), the devices table for the count (a Query), the audit table (each change's entry, written in the
 * change's transaction), the user pool's listing for the user count and the caller's own user (every request is
 * bounded by what the caller is now), and the cursor key. Routes sharing an entry share
 * one function and must declare the same access.
 */
const ADMIN_COMPANIES_ACCESS = {
  storage: true,
  pagesListings: true,
  // Audit: each company change writes its entry in the same transaction.
  tables: { companies: 'RW', devices: 'R', audit: 'W' },
  userPool: [...USER_COUNT_ACTIONS, ...CURRENT_USER_ACTIONS],
} as const;

/** The handler module of the four routes. */
const ADMIN_COMPANIES_ENTRY = 'functions/handlers/admin-companies.ts';

/** MAX_QUOTA_BYTES as the descriptions state it: `1 TiB`. */
const QUOTA_LIMIT_TEXT = `${MAX_QUOTA_BYTES / 1024 ** 4} TiB`;

const AdminCompanyParams = z.object({
  companyId: companyIdentifier.meta({
    description: 'The company: 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit.',
  }),
});

const FORBIDDEN = problem(
  'Forbidden',
  `Forbidden: the token lacks the scope (a platform administrator's; the caller's companies do not matter). ${CURRENT_CALLER_RULE}`,
);
const notFound = problem('NotFound', 'Not Found: there is no such company. Nothing was changed.');
const badCompanyId = 'a company id that is not 1 to 128 letters, digits, `.`, `_` or `-` starting with a letter or digit';
const OVER_QUOTA =
  'A company whose `usedBytes` is above its `quotaBytes` has `overQuota: true`: every upload then answers 413 until the quota is raised.';

/** POST /admin/companies */
export const adminCompanyCreate = defineRoute({
  id: 'AdminCompanyCreate',
  api: 'main',
  method: 'POST',
  path: ADMIN_COMPANIES_PATH,
  summary: 'Create a company',
  description: `Creates the company with nothing stored (\`usedBytes\` 0, no device, no scenario), its quota up to ${withThousandsSeparators(MAX_QUOTA_BYTES)} bytes (${QUOTA_LIMIT_TEXT}). Its id is fixed for good: it is the \`companies\` claim of its users' tokens and part of every key of its data. New ids are lower case, so that no two companies differ by case alone. Answers 201 with the company and its address in \`Location\`; an existing id, or one differing by case alone from a company created before that rule, is 409. Needs \`companies:write\`.`,
  tags: ['Administration'],
  scope: 'companies:write',
  request: {
    query: NoQuery,
    body: { kind: 'json', schema: CompanyCreateBody, invalidDetail: 'The company body is invalid; nothing was created.' },
  },
  access: ADMIN_COMPANIES_ACCESS,
  entry: ADMIN_COMPANIES_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    201: {
      description: 'The company is created.',
      schema: AdminCompany,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the company (`GET` it for its device count).' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      `Bad Request: an id that is not 1 to 128 lower-case letters, digits, \`.\`, \`_\` or \`-\` starting with a letter or digit (the violation names the lower-case id to use), a name not 1 to ${MAX_COMPANY_NAME_LENGTH} characters, a quota not an integer from 0 to ${QUOTA_LIMIT_TEXT}, or an unknown member. Nothing was created.`,
    ),
    403: FORBIDDEN,
    409: {
      description: 'Conflict: a company with this id exists, or one whose id differs by case alone. Nothing was changed.',
      schema: ConflictProblem,
    },
  },
});

/** GET /admin/companies */
export const adminCompaniesList = defineRoute({
  id: 'AdminCompaniesList',
  api: 'main',
  method: 'GET',
  path: ADMIN_COMPANIES_PATH,
  summary: 'List the companies',
  description: `Every company with its storage account, in no meaningful order (the companies table is keyed by the company id alone, so the listing is a paginated Scan; companies are few). ${OVER_QUOTA} Device counts are only in \`GET /admin/companies/{companyId}\` (each costs a count of the company's devices). A cursor issued for another listing gives 400. Needs \`companies:read\`.`,
  tags: ['Administration'],
  scope: 'companies:read',
  request: { query: ListQuery },
  access: ADMIN_COMPANIES_ACCESS,
  entry: ADMIN_COMPANIES_ENTRY,
  responses: {
    200: { description: 'A page of companies.', schema: AdminCompanyPage },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', 'Bad Request: a `limit` out of bounds, an unknown parameter, or a cursor this listing did not issue.'),
    403: FORBIDDEN,
  },
});

/** GET /admin/companies/{companyId} */
export const adminCompanyGet = defineRoute({
  id: 'AdminCompanyGet',
  api: 'main',
  method: 'GET',
  path: ADMIN_COMPANY_PATH,
  summary: 'Get a company, its storage used, its device count and its user count',
  description: `The company with its storage account, \`deviceCount\` and \`userCount\`, counted on each request: \`deviceCount\` by a paginated COUNT Query of the company's devices, which reads (and bills) every device item though it returns none (about 1,900 read units for 10,000 devices); \`userCount\` by reading the user directory (on AWS, Cognito's ListUsers, one call per 60 users of the pool). ${OVER_QUOTA} Needs \`companies:read\`.`,
  tags: ['Administration'],
  scope: 'companies:read',
  request: { params: AdminCompanyParams, query: NoQuery },
  access: ADMIN_COMPANIES_ACCESS,
  entry: ADMIN_COMPANIES_ENTRY,
  responses: {
    200: { description: 'The company.', schema: AdminCompanyDetail },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badCompanyId}, or a query parameter.`),
    403: FORBIDDEN,
    404: notFound,
  },
});

/** PATCH /admin/companies/{companyId} */
export const adminCompanyUpdate = defineRoute({
  id: 'AdminCompanyUpdate',
  api: 'main',
  method: 'PATCH',
  path: ADMIN_COMPANY_PATH,
  summary: "Change a company's name or quota",
  description: `Sets \`name\`, \`quotaBytes\` or both; \`usedBytes\` is never changed here. A quota below \`usedBytes\` is accepted (nothing stored is removed) and the answer says so with \`overQuota: true\`; from then on every upload that does not fit answers 413 (an upload racing the change is charged against the new quota: its conditional write fails and is tried again with the quota read anew). The search filters may show the old name for up to a minute (they cache company names). Needs \`companies:write\`.`,
  tags: ['Administration'],
  scope: 'companies:write',
  request: {
    params: AdminCompanyParams,
    query: NoQuery,
    body: { kind: 'json', schema: CompanyUpdateBody, invalidDetail: 'The company changes are invalid; nothing was changed.' },
  },
  access: ADMIN_COMPANIES_ACCESS,
  entry: ADMIN_COMPANIES_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The company after the change.', schema: AdminCompany },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      `Bad Request: ${badCompanyId}, an empty body, a name not 1 to ${MAX_COMPANY_NAME_LENGTH} characters, a quota not an integer from 0 to ${QUOTA_LIMIT_TEXT}, or an unknown member. Nothing was changed.`,
    ),
    403: FORBIDDEN,
    404: notFound,
    409: {
      description:
        "Conflict: other changes to the company kept landing between this change's read and its write (each change is written with its audit entry, whose `before` must be what it replaced). Nothing was changed; send it again.",
      schema: ConflictProblem,
    },
  },
});
