/**
 * The Cognito user pool as users administration uses it: the user attributes that carry a user's authorization,
 * written by administrators only (the app client may not write them, lib/identity.ts), which the user directory
 * (functions/adapters/aws/cognito-user-directory.ts) writes and reads and the pre-token-generation trigger
 * (functions/handlers/cognito-pre-token-generation.ts) turns into the access token's `scope` and `companies`; and the
 * administration actions the user directory calls, which a route's `access.userPool` grants.
 */
import type { CognitoAdminAction } from './route.js';

/** The user's role, a role name of functions/core/access/roles.ts. */
export const ROLE_ATTRIBUTE = 'custom:role';

/** The user's company ids, comma-separated (`acme,globex`). */
export const COMPANIES_ATTRIBUTE = 'custom:companies';

/**
 * Who disabled the user while they are disabled, `<role>:<username>` (`platform-admin:root`; neither holds a colon):
 * a platform administrator's disable holds against company administrators (functions/core/users/admin.ts).
 */
export const DISABLED_BY_ATTRIBUTE = 'custom:disabledBy';

/**
 * The scopes of a user made before roles, space-separated (`scenarios:read search:read`): read only when the user has
 * no role.
 */
export const SCOPE_ATTRIBUTE = 'custom:scope';

/**
 * Every Cognito action the user directory calls (its unit tests check it calls no other): what the function of the
 * users administration routes lists in `access.userPool`. A reset is AdminSetUserPassword and an invitation sent
 * again (AdminCreateUser), not AdminResetUserPassword (functions/adapters/aws/cognito-user-directory.ts says why).
 */
export const USER_DIRECTORY_ACTIONS: readonly CognitoAdminAction[] = [
  'AdminCreateUser',
  'AdminGetUser',
  'ListUsers',
  'AdminUpdateUserAttributes',
  'AdminDisableUser',
  'AdminEnableUser',
  'AdminDeleteUser',
  'AdminSetUserPassword',
  'AdminUserGlobalSignOut',
];

/** What counting a company's users (UserDirectory.countInCompany) calls: ListUsers only. */
export const USER_COUNT_ACTIONS: readonly CognitoAdminAction[] = ['ListUsers'];

/**
 * What reading the caller's own user calls (UserDirectory.get, AdminGetUser): every administration route bounds the
 * token by the caller as they are now (functions/core/users/current-administrator.ts).
 */
export const CURRENT_USER_ACTIONS: readonly CognitoAdminAction[] = ['AdminGetUser'];
