/**
 * API clients administration on the main address (docs/contract.md, "API clients"): administrators (`users:read`,
 * `users:write`: company admins and platform admins) create, list, read, change and delete the machine identities of
 * a company, and rotate their secrets. The paths name a client, not a company: no `companyParameter`; the use cases
 * (functions/core/clients/admin.ts) bound a company admin to the clients of their companies.
 */
import * as z from 'zod';
import { API_CLIENT_RECHECK_MS, MAX_API_CLIENTS_PER_COMPANY, MAX_PREVIOUS_SECRET_SECONDS } from '../../core/clients/model.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { CURRENT_USER_ACTIONS } from '../cognito-attributes.js';
import { NoQuery, pagingParameters, pathId, single } from '../parameters.js';
import { defineRoute, type FunctionAccess } from '../route.js';
import {
  ApiClient,
  ApiClientCreateBody,
  ApiClientPage,
  ApiClientRotateBody,
  ApiClientUpdateBody,
  ApiClientWithSecret,
} from '../schemas/api-clients.js';
import { COMPANY_ID_RULE } from '../schemas/companies.js';
import { ConflictProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import { CURRENT_CALLER_RULE } from '../schemas/users.js';

/** The clients listing's path, and the parent of each client's. */
export const ADMIN_API_CLIENTS_PATH = '/admin/api-clients';
const ADMIN_API_CLIENT_PATH = `${ADMIN_API_CLIENTS_PATH}/{clientId}`;

/**
 * What the one function of the six routes may touch: the apiClients table, the companies table (reads: a client's
 * company must exist), the audit table (each change's entry), the cursor key, and the caller's user in the user pool
 * (every request bounds the token by it). Routes sharing an entry share one function and must declare the same access.
 */
const ACCESS: FunctionAccess = {
  storage: true,
  pagesListings: true,
  tables: { apiClients: 'RW', companies: 'R', audit: 'W' },
  userPool: CURRENT_USER_ACTIONS,
};

/** The handler module of the six routes. */
const ENTRY = 'functions/handlers/admin-api-clients.ts';

const TAGS = ['Administration'];

const AdminApiClientParams = z.object({
  clientId: pathId('clientId', 'The client id (`api_` and a ULID).'),
});

const ApiClientsListQuery = z.strictObject({
  company: single('company').regex(IDENTIFIER_PATTERN, { error: COMPANY_ID_RULE }).optional().meta({
    description:
      "Only this company's clients. Without it a platform admin lists every client, a company admin the clients of their one company (400 for a company admin of several).",
  }),
  ...pagingParameters,
});

const RECHECK = `A disabled or deleted client gets no token, and the tokens it holds stop working within ${API_CLIENT_RECHECK_MS / 1000} seconds and one request; a lower role takes effect in the same time.`;
const BOUNDS =
  "A company admin manages only the clients of the token's `companies` (403 when creating one for another company, 404 for another company's client); a platform admin manages every client.";
const READ = `Needs \`users:read\` (company and platform admins). ${CURRENT_CALLER_RULE}`;
const WRITE = `Needs \`users:write\` (company and platform admins). ${CURRENT_CALLER_RULE}`;
const notFound = problem(
  'NotFound',
  "Not Found: there is no such client, or (for a company admin) it is another company's: the two are not told apart. Nothing was changed.",
);
const forbidden = (scope: string, more = '') =>
  problem('Forbidden', `Forbidden: the token lacks \`${scope}\`${more}. ${CURRENT_CALLER_RULE} Nothing was changed.`);
const raced = {
  description: 'Conflict: other changes to the client kept landing meanwhile; nothing was changed. Read it and send it again.',
  schema: ConflictProblem,
};
const noStore = {
  'Cache-Control': { ...HEADERS['Cache-Control'], description: '`no-store`: the answer holds a client secret.' },
};

/** POST /admin/api-clients */
export const adminApiClientCreate = defineRoute({
  id: 'AdminApiClientCreate',
  api: 'main',
  method: 'POST',
  path: ADMIN_API_CLIENTS_PATH,
  summary: 'Create an API client',
  description: `Creates a client of one company with a role, enabled, and draws its secret, shown once in this answer (\`clientSecret\`; only its hash is kept). The client gets tokens at the token endpoint with the client credentials grant (\`client_id\` and \`client_secret\`). A company has at most ${MAX_API_CLIENTS_PER_COMPANY} clients. ${BOUNDS} ${WRITE}`,
  tags: TAGS,
  scope: 'users:write',
  request: {
    query: NoQuery,
    body: { kind: 'json', schema: ApiClientCreateBody, invalidDetail: 'The API client is invalid; nothing was created.' },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    201: {
      description: 'The client and its secret (shown only here).',
      schema: ApiClientWithSecret,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the client.' }, ...noStore },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      '`errors` names each member: an empty or too long name, a company id out of pattern or of no existing company (`detail` names it), a role not `viewer` or `operator`, or an unknown member. Nothing was created.',
    ),
    403: forbidden('users:write', ", or a company admin's `company` is not one of theirs"),
    409: {
      description: `Conflict: the company already has ${MAX_API_CLIENTS_PER_COMPANY} clients, the most it may have; delete one first. Nothing was created.`,
      schema: ConflictProblem,
    },
  },
});

/** GET /admin/api-clients */
export const adminApiClientsList = defineRoute({
  id: 'AdminApiClientsList',
  api: 'main',
  method: 'GET',
  path: ADMIN_API_CLIENTS_PATH,
  summary: 'List the API clients',
  description: `The clients in id (creation) order, of \`company\` when given. ${BOUNDS} A cursor issued for another listing gives 400. Never a secret. ${READ}`,
  tags: TAGS,
  scope: 'users:read',
  request: { query: ApiClientsListQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'A page of clients.', schema: ApiClientPage },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: a company id out of pattern, a company admin of several companies naming none, a `limit` out of bounds, an unknown parameter, or a cursor this listing did not issue.',
    ),
    403: forbidden('users:read', ", or a company admin's `company` is not one of theirs"),
  },
});

/** GET /admin/api-clients/{clientId} */
export const adminApiClientGet = defineRoute({
  id: 'AdminApiClientGet',
  api: 'main',
  method: 'GET',
  path: ADMIN_API_CLIENT_PATH,
  summary: 'Get an API client',
  description: `The client: its company, role, whether it is enabled, when it was last used and until when its previous secret works. Never a secret. ${BOUNDS} ${READ}`,
  tags: TAGS,
  scope: 'users:read',
  request: { params: AdminApiClientParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'The client.', schema: ApiClient },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', 'Bad Request: a query parameter.'),
    403: forbidden('users:read'),
    404: notFound,
  },
});

/** PATCH /admin/api-clients/{clientId} */
export const adminApiClientUpdate = defineRoute({
  id: 'AdminApiClientUpdate',
  api: 'main',
  method: 'PATCH',
  path: ADMIN_API_CLIENT_PATH,
  summary: 'Rename an API client, change its role, or disable or enable it',
  description: `Sets \`name\`, \`role\`, \`enabled\` or several. ${RECHECK} ${BOUNDS} ${WRITE}`,
  tags: TAGS,
  scope: 'users:write',
  request: {
    params: AdminApiClientParams,
    query: NoQuery,
    body: { kind: 'json', schema: ApiClientUpdateBody, invalidDetail: 'The API client changes are invalid; nothing was changed.' },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The client after the change.', schema: ApiClient },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      '`errors` names each member: an empty body, an empty or too long name, a role not `viewer` or `operator`, or an unknown member. Nothing was changed.',
    ),
    403: forbidden('users:write'),
    404: notFound,
    409: raced,
  },
});

/** DELETE /admin/api-clients/{clientId} */
export const adminApiClientDelete = defineRoute({
  id: 'AdminApiClientDelete',
  api: 'main',
  method: 'DELETE',
  path: ADMIN_API_CLIENT_PATH,
  summary: 'Delete an API client',
  description: `Deletes the client for good. ${RECHECK} ${BOUNDS} ${WRITE}`,
  tags: TAGS,
  scope: 'users:write',
  request: { params: AdminApiClientParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    204: { description: 'The client is deleted.' },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', 'Bad Request: a query parameter.'),
    403: forbidden('users:write'),
    404: notFound,
  },
});

/** POST /admin/api-clients/{clientId}/secret */
export const adminApiClientRotate = defineRoute({
  id: 'AdminApiClientRotate',
  api: 'main',
  method: 'POST',
  path: `${ADMIN_API_CLIENT_PATH}/secret`,
  summary: "Rotate an API client's secret",
  description: `Draws a new secret, shown once in this answer (\`clientSecret\`). The secret it replaces keeps working for \`previousSecretValidSeconds\` (default and most ${MAX_PREVIOUS_SECRET_SECONDS} seconds, 24 hours; \`previousSecretExpiresAt\` says until when; 0: it stops at once), so that the new one can be rolled out before the old one stops; a secret replaced by an earlier rotation stops at once. The body is optional. ${BOUNDS} ${WRITE}`,
  tags: TAGS,
  scope: 'users:write',
  request: {
    params: AdminApiClientParams,
    query: NoQuery,
    body: {
      kind: 'json',
      schema: ApiClientRotateBody,
      optional: true,
      invalidDetail: 'The rotation is invalid; no secret was drawn.',
    },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The client and its new secret (shown only here).', schema: ApiClientWithSecret, headers: noStore },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: `previousSecretValidSeconds` not a whole number from 0 to 86400, an unknown member, or a body that is not JSON. No secret was drawn.',
    ),
    403: forbidden('users:write'),
    404: notFound,
    409: raced,
  },
});

/** The six routes, in the order ROUTES lists them. */
export const ADMIN_API_CLIENT_ROUTES = [
  adminApiClientCreate,
  adminApiClientsList,
  adminApiClientGet,
  adminApiClientUpdate,
  adminApiClientDelete,
  adminApiClientRotate,
] as const;
