/**
 * Users administration on the main address (docs/contract.md, "Users administration"): administrators (`users:read`,
 * `users:write`: company admins and platform admins) invite, list, read, change and delete users and reset their
 * passwords. The paths name a user, not a company: no `companyParameter`; the use cases
 * (functions/core/users/admin.ts) bound a company admin to the users of their companies.
 */
import * as z from 'zod';
import { ROLE_NAMES } from '../../core/access/roles.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../../core/access/user-tokens.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { MAX_COMPANIES_TEXT_LENGTH, MAX_EMAIL_LENGTH, MAX_USER_COMPANIES } from '../../core/users/admin.js';
import { USER_DIRECTORY_ACTIONS } from '../cognito-attributes.js';
import { NoQuery, pagingParameters, single } from '../parameters.js';
import { defineRoute } from '../route.js';
import { COMPANY_ID_RULE } from '../schemas/companies.js';
import { ConflictProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import {
  CURRENT_CALLER_RULE,
  PasswordReset,
  USERNAME_RULE,
  User,
  UserCreateBody,
  UserInvitation,
  UserPage,
  UserUpdateBody,
  username,
} from '../schemas/users.js';

/** The users listing's path, and the parent of each user's. */
export const ADMIN_USERS_PATH = '/admin/users';
const ADMIN_USER_PATH = `${ADMIN_USERS_PATH}/{username}`;

/**
 * What the one function of the six routes may touch: the user pool's administration actions the directory calls, the companies table
 * (reads: the companies a user is given must exist), the audit table (each change's entry) and the cursor key.
 * Routes sharing an entry share one function and must declare the same access.
 */
const ADMIN_USERS_ACCESS = {
  storage: true,
  pagesListings: true,
  tables: { companies: 'R', audit: 'W' },
  userPool: USER_DIRECTORY_ACTIONS,
} as const;

/** The handler module of the six routes. */
const ADMIN_USERS_ENTRY = 'functions/handlers/admin-users.ts';

const AdminUserParams = z.object({ username: username.meta({ description: USERNAME_RULE }) });

const UsersListQuery = z.strictObject({
  company: single('company')
    .regex(IDENTIFIER_PATTERN, { error: COMPANY_ID_RULE })
    .optional()
    .meta({ description: 'Only the users holding this company. A company admin must name one of theirs.' }),
  ...pagingParameters,
});

const BOUNDS =
  "A company admin manages only users whose role is at most their own and whose companies are all among the token's `companies`, before and after the change; they give at most their own role, never `platform-admin`.";
const forbidden = (what: string) =>
  problem(
    'Forbidden',
    `Forbidden: the token lacks \`${what}\` (a company admin's or a platform admin's), or the change is outside the caller's bounds${what === 'users:write' ? ', or a company admin would enable, reset or delete a user a platform admin disabled (`detail` names who)' : ''}. ${CURRENT_CALLER_RULE} ${BOUNDS} Nothing was changed.`,
  );
const notFound = problem(
  'NotFound',
  "Not Found: there is no such user, or (for a company admin) the user is outside the caller's companies: the two are not told apart. Nothing was changed.",
);
const badUsername = 'a username out of pattern (1 to 128 letters, digits, `.`, `_`, `@` or `-`, starting with a letter or digit)';
const badGrant = `an email that is not one (or above ${MAX_EMAIL_LENGTH} characters), a role not one of ${ROLE_NAMES.join(', ')}, more than ${MAX_USER_COMPANIES} companies (or more than ${withThousandsSeparators(MAX_COMPANIES_TEXT_LENGTH)} characters of them joined by commas) or one named twice, a company that does not exist (\`detail\` names it), no company for a role other than platform-admin, or an unknown member`;
const lastAdmin =
  'the last active platform admin (enabled, with a password of their own) cannot be demoted, disabled or deleted (make another user platform-admin, and let them sign in, first), and an admin cannot change their own role or enabled flag, nor delete themselves';

/** POST /admin/users */
export const adminUserCreate = defineRoute({
  id: 'AdminUserCreate',
  api: 'main',
  method: 'POST',
  path: ADMIN_USERS_PATH,
  summary: 'Invite a user',
  description: `Creates the user with a temporary password (status \`FORCE_CHANGE_PASSWORD\`): on AWS Cognito emails it to \`email\`; locally the answer's \`temporaryPassword\` holds it, shown this once. The user sets their own password at their first sign-in (the token endpoint's \`new_password_required\` challenge). Answers 201 with the user and their address in \`Location\`; a taken username is 409. ${BOUNDS} Needs \`users:write\`.`,
  tags: ['Administration'],
  scope: 'users:write',
  request: {
    query: NoQuery,
    body: { kind: 'json', schema: UserCreateBody, invalidDetail: 'The user body is invalid; nobody was invited.' },
  },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    201: {
      description: 'The user is invited.',
      schema: UserInvitation,
      headers: {
        Location: { ...HEADERS.Location, description: 'Address of the user.' },
        'Cache-Control': { ...HEADERS['Cache-Control'], description: '`no-store`: the answer may hold a temporary password.' },
      },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badUsername}, ${badGrant}. Nobody was invited.`),
    403: forbidden('users:write'),
    409: { description: 'Conflict: a user with this username exists. Nothing was changed.', schema: ConflictProblem },
  },
});

/** GET /admin/users */
export const adminUsersList = defineRoute({
  id: 'AdminUsersList',
  api: 'main',
  method: 'GET',
  path: ADMIN_USERS_PATH,
  summary: 'List the users',
  description: `The users, only those holding \`company\` when given: locally in username order; on AWS each page sorted by username, the pages in the user pool's own order (Cognito's ListUsers), every user once across them. A platform admin lists everyone; a company admin must name one of their companies in \`company\` (400 without, 403 for another's) and sees the users within their bounds only (${BOUNDS}), so a page may hold fewer than \`limit\` users and still have a next one. On AWS the listing reads Cognito's users 60 at a time and filters them by company. A cursor issued for another listing gives 400. Needs \`users:read\`.`,
  tags: ['Administration'],
  scope: 'users:read',
  request: { query: UsersListQuery },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    200: { description: 'A page of users.', schema: UserPage },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: a company admin naming no `company`, a company id out of pattern, a `limit` out of bounds, an unknown parameter, or a cursor this listing did not issue.',
    ),
    403: problem(
      'Forbidden',
      `Forbidden: the token lacks \`users:read\`, or a company admin's \`company\` is not one of theirs. ${CURRENT_CALLER_RULE}`,
    ),
  },
});

/** GET /admin/users/{username} */
export const adminUserGet = defineRoute({
  id: 'AdminUserGet',
  api: 'main',
  method: 'GET',
  path: ADMIN_USER_PATH,
  summary: 'Get a user',
  description: `The user, their role, companies, whether they are enabled and where they stand with their password. A company admin gets 404 for a user outside their bounds (${BOUNDS}). Needs \`users:read\`.`,
  tags: ['Administration'],
  scope: 'users:read',
  request: { params: AdminUserParams, query: NoQuery },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    200: { description: 'The user.', schema: User },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badUsername}, or a query parameter.`),
    403: problem('Forbidden', `Forbidden: the token lacks \`users:read\`. ${CURRENT_CALLER_RULE}`),
    404: notFound,
  },
});

/** PATCH /admin/users/{username} */
export const adminUserUpdate = defineRoute({
  id: 'AdminUserUpdate',
  api: 'main',
  method: 'PATCH',
  path: ADMIN_USER_PATH,
  summary: "Change a user's role, companies or enabled flag",
  description: `Sets \`role\`, \`companies\`, \`enabled\` or several. The user's next token carries the new role's scopes and companies (tokens already issued keep theirs until they expire, ${ACCESS_TOKEN_LIFETIME_SECONDS / 60} minutes at most). Disabling ends the user's sessions: they cannot sign in, and their refresh tokens are refused from then on. ${BOUNDS} Also 409: ${lastAdmin}. Needs \`users:write\`.`,
  tags: ['Administration'],
  scope: 'users:write',
  request: {
    params: AdminUserParams,
    query: NoQuery,
    body: { kind: 'json', schema: UserUpdateBody, invalidDetail: 'The user changes are invalid; nothing was changed.' },
  },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The user after the change.', schema: User },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badUsername}, an empty body, ${badGrant}. Nothing was changed.`),
    403: forbidden('users:write'),
    404: notFound,
    409: { description: `Conflict: ${lastAdmin}. Nothing was changed.`, schema: ConflictProblem },
  },
});

/** DELETE /admin/users/{username} */
export const adminUserDelete = defineRoute({
  id: 'AdminUserDelete',
  api: 'main',
  method: 'DELETE',
  path: ADMIN_USER_PATH,
  summary: 'Delete a user',
  description: `Deletes the user for good and ends their sessions (their refresh tokens are refused; access tokens already issued expire within ${ACCESS_TOKEN_LIFETIME_SECONDS / 60} minutes). ${BOUNDS} Also 409: ${lastAdmin}. Needs \`users:write\`.`,
  tags: ['Administration'],
  scope: 'users:write',
  request: { params: AdminUserParams, query: NoQuery },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    204: { description: 'The user is deleted.' },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badUsername}, or a query parameter.`),
    403: forbidden('users:write'),
    404: notFound,
    409: { description: `Conflict: ${lastAdmin}. Nothing was changed.`, schema: ConflictProblem },
  },
});

/** POST /admin/users/{username}/reset-password */
export const adminUserResetPassword = defineRoute({
  id: 'AdminUserResetPassword',
  api: 'main',
  method: 'POST',
  path: `${ADMIN_USER_PATH}/reset-password`,
  summary: "Reset a user's password",
  description: `Gives the user a new temporary password (status \`FORCE_CHANGE_PASSWORD\`) and ends their sessions: on AWS Cognito emails it; locally the answer's \`temporaryPassword\` holds it, shown this once. The user sets their own at the next sign-in. A disabled user is 409: enable them first. Takes no body. ${BOUNDS} Needs \`users:write\`.`,
  tags: ['Administration'],
  scope: 'users:write',
  request: { params: AdminUserParams, query: NoQuery },
  access: ADMIN_USERS_ACCESS,
  entry: ADMIN_USERS_ENTRY,
  responses: {
    200: {
      description: 'The password is reset.',
      schema: PasswordReset,
      headers: { 'Cache-Control': { ...HEADERS['Cache-Control'], description: '`no-store`: the answer may hold a temporary password.' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', `Bad Request: ${badUsername}, or a query parameter.`),
    403: forbidden('users:write'),
    404: notFound,
    409: { description: 'Conflict: the user is disabled; enable them first. Nothing was changed.', schema: ConflictProblem },
  },
});
