/**
 * The Cognito user attributes that carry a user's authorization, written by administrators only (the app client may
 * not write them, lib/identity.ts): the user directory (cognito-user-directory.ts) writes and reads them, and the
 * pre-token-generation trigger (functions/handlers/cognito-pre-token-generation.ts) turns them into the access token's
 * `scope` and `companies`.
 */

/** The user's role, a role name of functions/core/access/roles.ts. */
export const ROLE_ATTRIBUTE = 'custom:role';

/** The user's company ids, comma-separated (`acme,globex`). */
export const COMPANIES_ATTRIBUTE = 'custom:companies';

/**
 * The scopes of a user made before roles, space-separated (`scenarios:read search:read`): read only when the user has
 * no role.
 */
export const SCOPE_ATTRIBUTE = 'custom:scope';
