/**
 * The directory of users on AWS: the Cognito user pool (COGNITO_USER_POOL_ID) through its administration API. A user's
 * role and companies are the attributes `custom:role` and `custom:companies` (comma-separated), which the
 * pre-token-generation trigger turns into the access token's scopes and `companies`
 * (functions/handlers/cognito-pre-token-generation.ts); only administrators write them (the app client may not).
 *
 * What Cognito does for each change, and why:
 * - invite: AdminCreateUser emails the invitation (the pool's template: username and a temporary password valid for
 *   the pool's TemporaryPasswordValidityDays); the user is FORCE_CHANGE_PASSWORD, and their first sign-in at the token
 *   endpoint answers the `new_password_required` challenge.
 * - reset: AdminSetUserPassword with a random password nobody is told and `Permanent: false` puts the user back in
 *   FORCE_CHANGE_PASSWORD, then AdminCreateUser with `MessageAction: RESEND` (which Cognito accepts for
 *   FORCE_CHANGE_PASSWORD users only) emails a new invitation with a new temporary password; the user completes it
 *   like an invitation, at the token endpoint. AdminResetUserPassword is not used: it puts the user in RESET_REQUIRED,
 *   whose sign-ins fail with PasswordResetRequiredException until the user confirms an emailed code with
 *   ConfirmForgotPassword, a flow the token endpoint does not have, and it needs self-service account recovery, which
 *   the pool turns off.
 * - disable: AdminDisableUser (which revokes the user's tokens), then AdminUserGlobalSignOut; refreshes fail from then
 *   on. Access tokens already issued stay valid until they expire (15 minutes): API Gateway verifies them offline.
 * - delete: AdminUserGlobalSignOut, then AdminDeleteUser. A deleted user's refresh token finds no user, but Cognito
 *   documents revocation only for sign-out and disabling: signing out first does not depend on that.
 */

import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminDisableUserCommand,
  AdminEnableUserCommand,
  AdminGetUserCommand,
  AdminSetUserPasswordCommand,
  AdminUpdateUserAttributesCommand,
  AdminUserGlobalSignOutCommand,
  type AttributeType,
  type CognitoIdentityProviderClient,
  ListUsersCommand,
  type UserType,
} from '@aws-sdk/client-cognito-identity-provider';
import { COMPANIES_ATTRIBUTE, DISABLED_BY_ATTRIBUTE, ROLE_ATTRIBUTE, SCOPE_ATTRIBUTE } from '../../contract/cognito-attributes.js';
import { randomPassword } from '../../core/access/password-policy.js';
import { isRole, type Role, roleCovering } from '../../core/access/roles.js';
import { BadRequestError, ConflictError, ServiceUnavailableError } from '../../core/shared/errors.js';
import type { DirectoryChanges, DisabledBy, NewUser, User, UserDirectory, UserStatus } from '../../core/users/ports.js';

/** Most users one ListUsers call answers (Cognito's limit of its `Limit`). */
export const LIST_USERS_PAGE = 60;

/**
 * Most ListUsers calls one page of a filtered listing makes (600 users read) before it answers with what it found and
 * a cursor: a company's users are found in a large pool without holding the request near the HTTP timeout.
 */
export const MAX_CALLS_PER_PAGE = 10;

/** Seconds a caller should wait after Cognito throttled (its quotas are per second, per pool and category). */
export const THROTTLED_RETRY_AFTER_SECONDS = 5;

/** Cognito throttling: the request may be retried shortly. */
const THROTTLED = new Set(['TooManyRequestsException', 'LimitExceededException']);

/** The part of the Cognito client the directory uses (a CognitoIdentityProviderClient, or aws-sdk-client-mock's). */
export type CognitoUsersClient = Pick<CognitoIdentityProviderClient, 'send'>;

/**
 * A user's status in the port's terms, from Cognito's UserStatus:
 * - FORCE_CHANGE_PASSWORD (invited or reset through this service) stays so;
 * - RESET_REQUIRED (an AdminResetUserPassword made outside this service), UNCONFIRMED (self sign-up, which the pool
 *   refuses) and COMPROMISED (Cognito's threat protection blocked the password) all need a new password before the
 *   user can sign in: FORCE_CHANGE_PASSWORD. A reset through this service makes any of them a true
 *   FORCE_CHANGE_PASSWORD, which the token endpoint's challenge completes;
 * - CONFIRMED, EXTERNAL_PROVIDER, ARCHIVED, UNKNOWN and a missing status: CONFIRMED (the user has a password of
 *   their own, or Cognito says nothing that asks for one).
 */
export function statusOf(cognitoStatus: string | undefined): UserStatus {
  switch (cognitoStatus) {
    case 'FORCE_CHANGE_PASSWORD':
    case 'RESET_REQUIRED':
    case 'UNCONFIRMED':
    case 'COMPROMISED':
      return 'FORCE_CHANGE_PASSWORD';
    default:
      return 'CONFIRMED';
  }
}

/** `custom:companies` as company ids: split on commas, trimmed, empty items and repetitions dropped. */
export function companiesOf(attribute: string | undefined): string[] {
  return [
    ...new Set(
      (attribute ?? '')
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    ),
  ];
}

/**
 * A user's role: `custom:role` when it is a role name; else, for a user made before roles, the role whose scopes are
 * exactly their `custom:scope` (roleOf); else `viewer`, the lowest, which their token does not exceed only if
 * `custom:scope` holds nothing more: an administrator sets the role to make the view and the token agree.
 */
export function roleFromAttributes(attributes: Readonly<Record<string, string>>): Role {
  const role = attributes[ROLE_ATTRIBUTE];
  if (role !== undefined && isRole(role)) return role;
  return roleCovering((attributes[SCOPE_ATTRIBUTE] ?? '').split(/[\s,]+/).filter((scope) => scope !== ''));
}

/** `custom:disabledBy` (`<role>:<username>`) read back; undefined when empty or not of that form. */
export function disabledByOf(value: string | undefined): DisabledBy | undefined {
  const colon = value?.indexOf(':') ?? -1;
  if (value === undefined || colon < 0) return undefined;
  const role = value.slice(0, colon);
  const username = value.slice(colon + 1);
  return isRole(role) && username !== '' ? { username, role } : undefined;
}

/** Cognito's attribute list as a record. */
function attributeRecord(attributes: readonly AttributeType[] | undefined): Record<string, string> {
  return Object.fromEntries(
    (attributes ?? []).flatMap((attribute) => (attribute.Name === undefined ? [] : [[attribute.Name, attribute.Value ?? '']])),
  );
}

/** The fields AdminGetUser and ListUsers (UserType) both answer, under UserType's names. */
interface CognitoUserFields {
  Username?: string | undefined;
  Attributes?: AttributeType[] | undefined;
  UserCreateDate?: Date | undefined;
  UserLastModifiedDate?: Date | undefined;
  Enabled?: boolean | undefined;
  UserStatus?: string | undefined;
}

/** The port's view of a Cognito user. */
export function userOf(cognito: CognitoUserFields): User {
  const attributes = attributeRecord(cognito.Attributes);
  const createdAt = (cognito.UserCreateDate ?? new Date(0)).toISOString();
  const enabled = cognito.Enabled ?? true;
  const disabledBy = enabled ? undefined : disabledByOf(attributes[DISABLED_BY_ATTRIBUTE]);
  return {
    username: cognito.Username ?? '',
    email: attributes.email ?? '',
    role: roleFromAttributes(attributes),
    companies: companiesOf(attributes[COMPANIES_ATTRIBUTE]),
    enabled,
    ...(disabledBy === undefined ? {} : { disabledBy }),
    status: statusOf(cognito.UserStatus),
    createdAt,
    updatedAt: cognito.UserLastModifiedDate?.toISOString() ?? createdAt,
  };
}

/**
 * A password nobody is told, that meets the pool's policy (PASSWORD_POLICY, functions/core/access/password-policy.ts:
 * far longer than its minimum, with a lowercase letter, an uppercase letter, a digit and a symbol): what a reset sets
 * before Cognito emails a new temporary one.
 */
export function unknowablePassword(): string {
  // 48 characters: about 280 bits.
  return randomPassword(48);
}

/** The error's name (the SDK's exception class name), or ''. */
const nameOf = (error: unknown): string => (error as { name?: string } | undefined)?.name ?? '';

/** UserDirectory over a Cognito user pool (see the module comment). */
export class CognitoUserDirectory implements UserDirectory {
  /**
   * @param client the Cognito client (traced by the composition root).
   * @param userPoolId the pool (COGNITO_USER_POOL_ID), read on each call.
   */
  constructor(
    private readonly client: CognitoUsersClient,
    private readonly userPoolId: () => string,
  ) {}

  /**
   * AdminCreateUser with `email` (verified: Cognito sends the invitation there), `custom:role` and, when there are
   * any, `custom:companies`; the invitation goes by email. No temporary password is returned: Cognito emails it.
   * @returns undefined when the username is taken (UsernameExistsException; usernames are case-insensitive).
   * @throws BadRequestError (400) when Cognito refuses an attribute (InvalidParameterException).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async create(user: NewUser): Promise<{ user: User } | undefined> {
    const attributes: AttributeType[] = [
      { Name: 'email', Value: user.email },
      { Name: 'email_verified', Value: 'true' },
      { Name: ROLE_ATTRIBUTE, Value: user.role },
      ...(user.companies.length === 0 ? [] : [{ Name: COMPANIES_ATTRIBUTE, Value: user.companies.join(',') }]),
    ];
    try {
      const output = await this.call(
        this.client.send(
          new AdminCreateUserCommand({
            UserPoolId: this.userPoolId(),
            Username: user.username,
            UserAttributes: attributes,
            DesiredDeliveryMediums: ['EMAIL'],
          }),
        ),
      );
      return { user: userOf(output.User ?? { Username: user.username, Attributes: attributes, UserStatus: 'FORCE_CHANGE_PASSWORD' }) };
    } catch (error) {
      if (nameOf(error) === 'UsernameExistsException') return undefined;
      throw error;
    }
  }

  /**
   * AdminGetUser.
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async get(username: string): Promise<User | undefined> {
    try {
      const output = await this.call(this.client.send(new AdminGetUserCommand({ UserPoolId: this.userPoolId(), Username: username })));
      return userOf({ ...output, Attributes: output.UserAttributes });
    } catch (error) {
      if (nameOf(error) === 'UserNotFoundException') return undefined;
      throw error;
    }
  }

  /**
   * ListUsers from `cursor` (its PaginationToken), keeping the users holding `filter.company` when given: ListUsers
   * filters on standard attributes only, so the company is matched here. Asks for at most `limit` users still wanted
   * per call (at most LIST_USERS_PAGE), so a page never holds more than `limit` and the token resumes right after it;
   * a filtered page reads on until it has `limit` users, the pool ends, or MAX_CALLS_PER_PAGE calls were made.
   *
   * Order: Cognito's, which it does not document and which is not username order (Cognito pages in its own internal
   * order); each page is sorted by username, and the PaginationToken continues the same walk of the pool, so a
   * listing followed to its end sees every user that existed throughout, once.
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   * @throws BadRequestError (400) when Cognito refuses the cursor (InvalidParameterException: a token of another pool,
   *   or expired).
   */
  async list(
    filter: { company?: string },
    limit: number,
    cursor: string | undefined,
  ): Promise<{ items: User[]; nextCursor: string | undefined }> {
    const items: User[] = [];
    let token = cursor;
    for (let calls = 0; calls < MAX_CALLS_PER_PAGE && items.length < limit; calls += 1) {
      const page = await this.listPage(Math.min(LIST_USERS_PAGE, limit - items.length), token);
      const users = page.Users ?? [];
      for (const user of users.map(userOf)) if (filter.company === undefined || user.companies.includes(filter.company)) items.push(user);
      token = page.PaginationToken;
      if (token === undefined) break;
    }
    items.sort((a, b) => (a.username < b.username ? -1 : a.username > b.username ? 1 : 0));
    return { items, nextCursor: token };
  }

  /**
   * AdminUpdateUserAttributes for `role`, `companies` (an empty list is written as an empty attribute) and, when a
   * disable records who made it, `custom:disabledBy`; for `enabled: false` AdminDisableUser then
   * AdminUserGlobalSignOut, for `enabled: true` AdminEnableUser, then `custom:disabledBy` emptied; then the user as
   * Cognito holds them (AdminGetUser). Who disabled the user is written before the disable and cleared after the
   * enable (best effort), so that a failure between two calls never leaves a disabled user without it.
   * @returns undefined when there is no such user (UserNotFoundException on the first call: nothing changed).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles (the calls made before it stand).
   */
  async update(username: string, changes: DirectoryChanges): Promise<User | undefined> {
    const UserPoolId = this.userPoolId();
    const { disabledBy } = changes;
    const attributes: AttributeType[] = [
      ...(changes.role === undefined ? [] : [{ Name: ROLE_ATTRIBUTE, Value: changes.role }]),
      ...(changes.companies === undefined ? [] : [{ Name: COMPANIES_ATTRIBUTE, Value: changes.companies.join(',') }]),
      ...(disabledBy === undefined || disabledBy === null
        ? []
        : [{ Name: DISABLED_BY_ATTRIBUTE, Value: `${disabledBy.role}:${disabledBy.username}` }]),
    ];
    const updateAttributes = (UserAttributes: AttributeType[]) =>
      this.call(this.client.send(new AdminUpdateUserAttributesCommand({ UserPoolId, Username: username, UserAttributes })));
    try {
      if (attributes.length > 0) await updateAttributes(attributes);
      if (changes.enabled === false) {
        await this.call(this.client.send(new AdminDisableUserCommand({ UserPoolId, Username: username })));
        await this.signOut(UserPoolId, username);
      } else if (changes.enabled === true) {
        await this.call(this.client.send(new AdminEnableUserCommand({ UserPoolId, Username: username })));
      }
      if (disabledBy === null) {
        // After the enable, which stands whatever follows: a value left behind is harmless (it is not read while the
        // user is enabled, and the next disable overwrites it), so a throttled clear does not fail the request.
        await updateAttributes([{ Name: DISABLED_BY_ATTRIBUTE, Value: '' }]).catch(() => undefined);
      }
    } catch (error) {
      if (nameOf(error) === 'UserNotFoundException') return undefined;
      throw error;
    }
    return this.get(username);
  }

  /**
   * AdminUserGlobalSignOut, then AdminDeleteUser.
   * @returns false when there is no such user (UserNotFoundException).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async delete(username: string): Promise<boolean> {
    const UserPoolId = this.userPoolId();
    try {
      await this.signOut(UserPoolId, username);
      await this.call(this.client.send(new AdminDeleteUserCommand({ UserPoolId, Username: username })));
      return true;
    } catch (error) {
      if (nameOf(error) === 'UserNotFoundException') return false;
      throw error;
    }
  }

  /**
   * AdminSetUserPassword (an unknowable password, `Permanent: false`: FORCE_CHANGE_PASSWORD), AdminUserGlobalSignOut,
   * then AdminCreateUser with `MessageAction: RESEND` by email (Cognito generates and emails a new temporary password;
   * when that fails, the user is already signed out and a new reset sends it). No temporary password is returned: Cognito emails it.
   * @returns undefined when there is no such user (UserNotFoundException).
   * @throws ConflictError (409) when the user is disabled (Cognito refuses it; enable them first).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async resetPassword(username: string): Promise<{ temporaryPassword?: string } | undefined> {
    const UserPoolId = this.userPoolId();
    try {
      await this.call(
        this.client.send(
          new AdminSetUserPasswordCommand({ UserPoolId, Username: username, Password: unknowablePassword(), Permanent: false }),
        ),
      );
      // Sessions end before the email is asked for: when the email fails (Cognito's default sender sends 50 a day), the
      // old password is already gone and must not live on in refresh tokens.
      await this.signOut(UserPoolId, username);
      await this.call(
        this.client.send(
          new AdminCreateUserCommand({ UserPoolId, Username: username, MessageAction: 'RESEND', DesiredDeliveryMediums: ['EMAIL'] }),
        ),
      );
      return {};
    } catch (error) {
      if (nameOf(error) === 'UserNotFoundException') return undefined;
      // Cognito refuses to set a disabled user's password ("User is disabled").
      if (nameOf(error) === 'NotAuthorizedException') {
        throw new ConflictError(`The user ${username} is disabled: enable them first (enabled: true), then reset their password.`);
      }
      throw error;
    }
  }

  /**
   * Users holding `company`: every page of ListUsers (one call per LIST_USERS_PAGE users).
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async countInCompany(company: string): Promise<number> {
    let count = 0;
    await this.eachUser((user) => {
      if (user.companies.includes(company)) count += 1;
    });
    return count;
  }

  /**
   * Enabled users whose role is platform-admin: every page of ListUsers.
   * @throws ServiceUnavailableError (503, Retry-After) when Cognito throttles.
   */
  async countActivePlatformAdmins(): Promise<number> {
    let count = 0;
    await this.eachUser((user) => {
      if (user.enabled && user.role === 'platform-admin' && user.status === 'CONFIRMED') count += 1;
    });
    return count;
  }

  /** Calls `visit` with every user of the pool. */
  private async eachUser(visit: (user: User) => void): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.listPage(LIST_USERS_PAGE, token);
      for (const user of page.Users ?? []) visit(userOf(user));
      token = page.PaginationToken;
    } while (token !== undefined);
  }

  /** One ListUsers call, with every attribute (AttributesToGet fails when a custom attribute asked for is unset on a user). */
  private listPage(limit: number, token: string | undefined): Promise<{ Users?: UserType[]; PaginationToken?: string }> {
    return this.call(
      this.client.send(
        new ListUsersCommand({
          UserPoolId: this.userPoolId(),
          Limit: limit,
          ...(token === undefined ? {} : { PaginationToken: token }),
        }),
      ),
    );
  }

  /**
   * AdminUserGlobalSignOut: Cognito revokes the user's refresh tokens. A user just disabled may be refused it
   * (NotAuthorizedException); disabling has revoked their tokens already.
   */
  private async signOut(UserPoolId: string, username: string): Promise<void> {
    try {
      await this.call(this.client.send(new AdminUserGlobalSignOutCommand({ UserPoolId, Username: username })));
    } catch (error) {
      if (nameOf(error) !== 'NotAuthorizedException') throw error;
    }
  }

  /** The answer of a Cognito call (`sent`), throttling answered with 503 and a refused parameter with 400. */
  private async call<Output>(sent: Promise<Output>): Promise<Output> {
    try {
      return await sent;
    } catch (error) {
      const name = nameOf(error);
      if (THROTTLED.has(name))
        throw new ServiceUnavailableError('Cognito is throttling user administration; retry shortly.', THROTTLED_RETRY_AFTER_SECONDS);
      if (name === 'InvalidParameterException') throw new BadRequestError(`Cognito refused the request: ${(error as Error).message}`);
      throw error;
    }
  }
}
