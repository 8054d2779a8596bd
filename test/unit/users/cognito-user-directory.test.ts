/**
 * The user directory on AWS (functions/adapters/aws/cognito-user-directory.ts) against a mocked Cognito: what each
 * administration change sends Cognito (attributes, calls and their order), how Cognito's users read back, and how its
 * refusals and throttling are answered.
 */
import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  AdminSetUserPasswordCommand,
  AdminUpdateUserAttributesCommand,
  AdminUserGlobalSignOutCommand,
  CognitoIdentityProviderClient,
  InvalidParameterException,
  LimitExceededException,
  ListUsersCommand,
  NotAuthorizedException,
  TooManyRequestsException,
  UserNotFoundException,
  UsernameExistsException,
  type UserType,
} from '@aws-sdk/client-cognito-identity-provider';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  CognitoUserDirectory,
  LIST_USERS_PAGE,
  statusOf,
  unknowablePassword,
} from '../../../functions/adapters/aws/cognito-user-directory.js';
import { USER_COUNT_ACTIONS, USER_DIRECTORY_ACTIONS } from '../../../functions/contract/cognito-attributes.js';
import { missingFromPassword } from '../../../functions/core/access/password-policy.js';
import { BadRequestError, ConflictError, ServiceUnavailableError } from '../../../functions/core/shared/errors.js';

const POOL = 'eu-west-1_TestPool';
const cognito = mockClient(CognitoIdentityProviderClient);
const directory = new CognitoUserDirectory(new CognitoIdentityProviderClient({ region: 'eu-west-1' }), () => POOL);

const CREATED = new Date('2026-11-01T10:00:00.000Z');
const MODIFIED = new Date('2026-11-02T11:00:00.000Z');

/** A Cognito user as ListUsers answers it. */
function cognitoUser(username: string, attributes: Record<string, string>, extra: Partial<UserType> = {}): UserType {
  return {
    Username: username,
    Attributes: Object.entries(attributes).map(([Name, Value]) => ({ Name, Value })),
    UserCreateDate: CREATED,
    UserLastModifiedDate: MODIFIED,
    Enabled: true,
    UserStatus: 'CONFIRMED',
    ...extra,
  };
}

/** The commands sent, by name, in order. */
const sent = () => cognito.calls().map((call) => (call.args[0] as { constructor: { name: string } }).constructor.name);

/** Every Cognito action any test below made the directory call (`AdminGetUserCommand` → `AdminGetUser`). */
const called = new Set<string>();
/** The actions counting a company's users called. */
const calledToCount = new Set<string>();

/** Forgets the calls and behaviours of the mocked client, noting the calls in `called` first. */
function resetCognito(): void {
  for (const name of sent()) called.add(name.replace(/Command$/, ''));
  cognito.reset();
}

afterEach(resetCognito);

afterAll(() => {
  // The IAM grants are read from these lists: a call missing from them would be refused on AWS.
  expect([...called].sort()).toEqual([...USER_DIRECTORY_ACTIONS].sort());
  expect([...calledToCount]).toEqual([...USER_COUNT_ACTIONS]);
});

describe('inviting a user', () => {
  it('creates them with their email (verified), role and companies, invited by email, and reads them back FORCE_CHANGE_PASSWORD', async () => {
    cognito.on(AdminCreateUserCommand).resolves({
      User: cognitoUser(
        'ana',
        { email: 'ana@example.com', email_verified: 'true', 'custom:role': 'operator', 'custom:companies': 'acme,globex' },
        { UserStatus: 'FORCE_CHANGE_PASSWORD', UserLastModifiedDate: CREATED },
      ),
    });
    const created = await directory.create({ username: 'ana', email: 'ana@example.com', role: 'operator', companies: ['acme', 'globex'] });
    expect(cognito.commandCalls(AdminCreateUserCommand)[0]?.args[0].input).toEqual({
      UserPoolId: POOL,
      Username: 'ana',
      UserAttributes: [
        { Name: 'email', Value: 'ana@example.com' },
        { Name: 'email_verified', Value: 'true' },
        { Name: 'custom:role', Value: 'operator' },
        { Name: 'custom:companies', Value: 'acme,globex' },
      ],
      DesiredDeliveryMediums: ['EMAIL'],
    });
    // Cognito emails the temporary password: none is returned.
    expect(created).toEqual({
      user: {
        username: 'ana',
        email: 'ana@example.com',
        role: 'operator',
        companies: ['acme', 'globex'],
        enabled: true,
        status: 'FORCE_CHANGE_PASSWORD',
        createdAt: CREATED.toISOString(),
        updatedAt: CREATED.toISOString(),
      },
    });
  });

  it('writes no companies attribute for a platform admin without companies', async () => {
    cognito
      .on(AdminCreateUserCommand)
      .resolves({ User: cognitoUser('root', { email: 'root@example.com', 'custom:role': 'platform-admin' }) });
    const created = await directory.create({ username: 'root', email: 'root@example.com', role: 'platform-admin', companies: [] });
    const names = cognito.commandCalls(AdminCreateUserCommand)[0]?.args[0].input.UserAttributes?.map((attribute) => attribute.Name);
    expect(names).toEqual(['email', 'email_verified', 'custom:role']);
    expect(created?.user.companies).toEqual([]);
  });

  it('answers undefined when the username is taken, and 400 when Cognito refuses an attribute', async () => {
    cognito
      .on(AdminCreateUserCommand)
      .rejectsOnce(new UsernameExistsException({ message: 'User account already exists', $metadata: {} }))
      .rejectsOnce(new InvalidParameterException({ message: 'Invalid email address format.', $metadata: {} }));
    expect(await directory.create({ username: 'ana', email: 'ana@example.com', role: 'viewer', companies: ['acme'] })).toBeUndefined();
    await expect(directory.create({ username: 'bob', email: 'bob@example', role: 'viewer', companies: ['acme'] })).rejects.toThrow(
      BadRequestError,
    );
  });
});

describe('reading users', () => {
  it('gets a user with AdminGetUser, and undefined for an unknown one', async () => {
    cognito
      .on(AdminGetUserCommand, { UserPoolId: POOL, Username: 'ana' })
      .resolves({
        Username: 'ana',
        UserAttributes: [
          { Name: 'email', Value: 'ana@example.com' },
          { Name: 'custom:role', Value: 'company-admin' },
          { Name: 'custom:companies', Value: 'acme' },
        ],
        UserCreateDate: CREATED,
        UserLastModifiedDate: MODIFIED,
        Enabled: false,
        UserStatus: 'CONFIRMED',
      })
      .on(AdminGetUserCommand, { UserPoolId: POOL, Username: 'nobody' })
      .rejects(new UserNotFoundException({ message: 'User does not exist.', $metadata: {} }));
    expect(await directory.get('ana')).toEqual({
      username: 'ana',
      email: 'ana@example.com',
      role: 'company-admin',
      companies: ['acme'],
      enabled: false,
      status: 'CONFIRMED',
      createdAt: CREATED.toISOString(),
      updatedAt: MODIFIED.toISOString(),
    });
    expect(await directory.get('nobody')).toBeUndefined();
  });

  it('gives a user made before roles the role their legacy scopes are exactly, else viewer', async () => {
    cognito.on(ListUsersCommand).resolves({
      Users: [
        cognitoUser('legacy-operator', {
          'custom:scope': 'scenarios:read scenarios:write deployments:read deployments:write search:read devices:read devices:write',
          'custom:companies': 'acme',
        }),
        cognitoUser('legacy-odd', { 'custom:scope': 'search:read', 'custom:companies': 'acme' }),
      ],
    });
    const { items } = await directory.list({}, 10, undefined);
    expect(items.map((user) => [user.username, user.role])).toEqual([
      ['legacy-odd', 'viewer'],
      ['legacy-operator', 'operator'],
    ]);
  });

  it('maps Cognito statuses: those that need a new password before signing in are FORCE_CHANGE_PASSWORD', () => {
    expect(['FORCE_CHANGE_PASSWORD', 'RESET_REQUIRED', 'UNCONFIRMED', 'COMPROMISED'].map(statusOf)).toEqual(
      Array(4).fill('FORCE_CHANGE_PASSWORD'),
    );
    expect(['CONFIRMED', 'EXTERNAL_PROVIDER', 'ARCHIVED', 'UNKNOWN', undefined].map(statusOf)).toEqual(Array(5).fill('CONFIRMED'));
  });
});

describe('listing users', () => {
  it("keeps a company's users across Cognito's pages, asking no more than the page still wants, and resumes with the token", async () => {
    cognito
      .on(ListUsersCommand, { PaginationToken: undefined })
      .resolves({
        Users: [
          cognitoUser('zed', { 'custom:role': 'viewer', 'custom:companies': 'acme' }),
          cognitoUser('bob', { 'custom:role': 'viewer', 'custom:companies': 'globex' }),
          cognitoUser('ana', { 'custom:role': 'operator', 'custom:companies': 'globex, acme' }),
        ],
        PaginationToken: 'page-2',
      })
      .on(ListUsersCommand, { PaginationToken: 'page-2' })
      .resolves({
        Users: [cognitoUser('cid', { 'custom:role': 'viewer', 'custom:companies': 'initech' })],
        PaginationToken: 'page-3',
      })
      .on(ListUsersCommand, { PaginationToken: 'page-3' })
      .resolves({ Users: [cognitoUser('dee', { 'custom:role': 'viewer', 'custom:companies': 'acme' })], PaginationToken: 'page-4' });

    const page = await directory.list({ company: 'acme' }, 3, undefined);
    // Each page sorted by username; the next listing resumes where Cognito's walk stopped.
    expect(page.items.map((user) => user.username)).toEqual(['ana', 'dee', 'zed']);
    expect(page.nextCursor).toBe('page-4');
    expect(cognito.commandCalls(ListUsersCommand).map((call) => [call.args[0].input.Limit, call.args[0].input.PaginationToken])).toEqual([
      [3, undefined],
      [1, 'page-2'],
      [1, 'page-3'],
    ]);
    // No AttributesToGet: Cognito refuses it when a custom attribute asked for is unset on a user (a platform
    // admin has no custom:companies, a user made with a role no custom:scope).
    const input = cognito.commandCalls(ListUsersCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ UserPoolId: POOL });
    expect(input).not.toHaveProperty('AttributesToGet');
  });

  it('asks at most 60 users of Cognito per call, and ends without a cursor when the pool ends', async () => {
    cognito.on(ListUsersCommand).resolves({ Users: [cognitoUser('ana', { 'custom:role': 'viewer' })] });
    const page = await directory.list({}, 500, 'from-before');
    expect(page).toMatchObject({ items: [{ username: 'ana' }], nextCursor: undefined });
    expect(cognito.commandCalls(ListUsersCommand)[0]?.args[0].input).toMatchObject({
      Limit: LIST_USERS_PAGE,
      PaginationToken: 'from-before',
    });
  });

  it('counts the users of a company and the enabled platform admins over every page', async () => {
    cognito
      .on(ListUsersCommand, { PaginationToken: undefined })
      .resolves({
        Users: [
          cognitoUser('root', { 'custom:role': 'platform-admin' }),
          cognitoUser('old-root', { 'custom:role': 'platform-admin' }, { Enabled: false }),
          cognitoUser('ana', { 'custom:role': 'viewer', 'custom:companies': 'acme' }),
        ],
        PaginationToken: 'next',
      })
      .on(ListUsersCommand, { PaginationToken: 'next' })
      .resolves({ Users: [cognitoUser('acme-root', { 'custom:role': 'platform-admin', 'custom:companies': 'acme' })] });
    expect(await directory.countInCompany('acme')).toBe(2);
    for (const name of sent()) calledToCount.add(name.replace(/Command$/, ''));
    expect(await directory.countActivePlatformAdmins()).toBe(2);
    for (const call of cognito.commandCalls(ListUsersCommand)) expect(call.args[0].input.Limit).toBe(LIST_USERS_PAGE);
  });
});

describe('changing users', () => {
  const after = {
    Username: 'ana',
    UserAttributes: [
      { Name: 'email', Value: 'ana@example.com' },
      { Name: 'custom:role', Value: 'company-admin' },
      { Name: 'custom:companies', Value: 'acme,initech' },
    ],
    UserCreateDate: CREATED,
    UserLastModifiedDate: MODIFIED,
    Enabled: true,
    UserStatus: 'CONFIRMED' as const,
  };

  it('writes the role and companies as attributes, then reads the user back', async () => {
    cognito.on(AdminGetUserCommand).resolves(after);
    const user = await directory.update('ana', { role: 'company-admin', companies: ['acme', 'initech'] });
    expect(sent()).toEqual(['AdminUpdateUserAttributesCommand', 'AdminGetUserCommand']);
    expect(cognito.commandCalls(AdminUpdateUserAttributesCommand)[0]?.args[0].input).toEqual({
      UserPoolId: POOL,
      Username: 'ana',
      UserAttributes: [
        { Name: 'custom:role', Value: 'company-admin' },
        { Name: 'custom:companies', Value: 'acme,initech' },
      ],
    });
    expect(user).toMatchObject({ role: 'company-admin', companies: ['acme', 'initech'] });
  });

  it('disables the user, then signs them out everywhere (refresh tokens revoked)', async () => {
    cognito.on(AdminGetUserCommand).resolves({ ...after, Enabled: false });
    const user = await directory.update('ana', { enabled: false });
    expect(sent()).toEqual(['AdminDisableUserCommand', 'AdminUserGlobalSignOutCommand', 'AdminGetUserCommand']);
    expect(cognito.commandCalls(AdminUserGlobalSignOutCommand)[0]?.args[0].input).toEqual({ UserPoolId: POOL, Username: 'ana' });
    expect(user?.enabled).toBe(false);
  });

  it('still disables when Cognito refuses signing out a user it has just disabled (disabling revoked their tokens)', async () => {
    cognito
      .on(AdminUserGlobalSignOutCommand)
      .rejects(new NotAuthorizedException({ message: 'User is disabled.', $metadata: {} }))
      .on(AdminGetUserCommand)
      .resolves({ ...after, Enabled: false });
    expect((await directory.update('ana', { enabled: false }))?.enabled).toBe(false);
  });

  it('enables the user with AdminEnableUser, signing nobody out', async () => {
    cognito.on(AdminGetUserCommand).resolves(after);
    expect((await directory.update('ana', { enabled: true }))?.enabled).toBe(true);
    expect(sent()).toEqual(['AdminEnableUserCommand', 'AdminGetUserCommand']);
  });

  it('records who disabled the user before disabling them, reads it back while disabled, and empties it after enabling', async () => {
    const disabledBy = { Name: 'custom:disabledBy', Value: 'platform-admin:root' };
    cognito.on(AdminGetUserCommand).resolves({ ...after, Enabled: false, UserAttributes: [...after.UserAttributes, disabledBy] });
    const user = await directory.update('ana', { enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } });
    expect(sent()).toEqual([
      'AdminUpdateUserAttributesCommand',
      'AdminDisableUserCommand',
      'AdminUserGlobalSignOutCommand',
      'AdminGetUserCommand',
    ]);
    expect(cognito.commandCalls(AdminUpdateUserAttributesCommand)[0]?.args[0].input.UserAttributes).toEqual([disabledBy]);
    expect(user).toMatchObject({ enabled: false, disabledBy: { username: 'root', role: 'platform-admin' } });
    resetCognito();

    // Enabled again: the attribute is emptied after the enable, and an enabled user shows no disabledBy whatever it holds.
    cognito.on(AdminGetUserCommand).resolves({ ...after, UserAttributes: [...after.UserAttributes, disabledBy] });
    const enabled = await directory.update('ana', { enabled: true, disabledBy: null });
    expect(sent()).toEqual(['AdminEnableUserCommand', 'AdminUpdateUserAttributesCommand', 'AdminGetUserCommand']);
    expect(cognito.commandCalls(AdminUpdateUserAttributesCommand)[0]?.args[0].input.UserAttributes).toEqual([
      { Name: 'custom:disabledBy', Value: '' },
    ]);
    expect(enabled).not.toHaveProperty('disabledBy');
  });

  it('answers undefined for an unknown user, having changed nothing', async () => {
    cognito.on(AdminUpdateUserAttributesCommand).rejects(new UserNotFoundException({ message: 'User does not exist.', $metadata: {} }));
    expect(await directory.update('nobody', { role: 'viewer', enabled: false })).toBeUndefined();
    expect(sent()).toEqual(['AdminUpdateUserAttributesCommand']);
  });

  it('signs the user out, then deletes them; false for an unknown user', async () => {
    expect(await directory.delete('ana')).toBe(true);
    expect(sent()).toEqual(['AdminUserGlobalSignOutCommand', 'AdminDeleteUserCommand']);
    expect(cognito.commandCalls(AdminDeleteUserCommand)[0]?.args[0].input).toEqual({ UserPoolId: POOL, Username: 'ana' });
    resetCognito();
    cognito.on(AdminUserGlobalSignOutCommand).rejects(new UserNotFoundException({ message: 'User does not exist.', $metadata: {} }));
    expect(await directory.delete('nobody')).toBe(false);
    expect(cognito.commandCalls(AdminDeleteUserCommand)).toHaveLength(0);
  });
});

describe('resetting a password', () => {
  it('puts the user back in FORCE_CHANGE_PASSWORD, signs them out, and has Cognito email a new temporary password', async () => {
    expect(await directory.resetPassword('ana')).toEqual({});
    expect(sent()).toEqual(['AdminSetUserPasswordCommand', 'AdminUserGlobalSignOutCommand', 'AdminCreateUserCommand']);
    const set = cognito.commandCalls(AdminSetUserPasswordCommand)[0]?.args[0].input;
    expect(set).toMatchObject({ UserPoolId: POOL, Username: 'ana', Permanent: false });
    expect(cognito.commandCalls(AdminCreateUserCommand)[0]?.args[0].input).toEqual({
      UserPoolId: POOL,
      Username: 'ana',
      MessageAction: 'RESEND',
      DesiredDeliveryMediums: ['EMAIL'],
    });
    // The password set first is told to nobody: RESEND makes Cognito generate the temporary one it emails.
    expect(missingFromPassword(set?.Password ?? '')).toEqual([]);
  });

  it('has signed the user out when the invitation email fails (the old password must not live on in refresh tokens)', async () => {
    cognito.on(AdminCreateUserCommand).rejects(new LimitExceededException({ message: 'Exceeded daily email limit.', $metadata: {} }));
    await expect(directory.resetPassword('ana')).rejects.toThrow();
    expect(sent()).toEqual(['AdminSetUserPasswordCommand', 'AdminUserGlobalSignOutCommand', 'AdminCreateUserCommand']);
  });

  it('sets passwords that meet the password policy Cognito enforces (else AdminSetUserPassword would refuse them)', () => {
    for (let i = 0; i < 50; i += 1) expect(missingFromPassword(unknowablePassword())).toEqual([]);
  });

  it('answers undefined for an unknown user, and 409 for a disabled one (Cognito refuses; enable first)', async () => {
    cognito
      .on(AdminSetUserPasswordCommand)
      .rejectsOnce(new UserNotFoundException({ message: 'User does not exist.', $metadata: {} }))
      .rejectsOnce(new NotAuthorizedException({ message: 'User is disabled.', $metadata: {} }));
    expect(await directory.resetPassword('nobody')).toBeUndefined();
    await expect(directory.resetPassword('ana')).rejects.toThrow(ConflictError);
    expect(cognito.commandCalls(AdminCreateUserCommand)).toHaveLength(0);
  });
});

describe('throttling', () => {
  it('answers 503 with a Retry-After when Cognito throttles any call', async () => {
    cognito.onAnyCommand().rejects(new TooManyRequestsException({ message: 'Rate exceeded', $metadata: {} }));
    const calls = [
      () => directory.get('ana'),
      () => directory.list({}, 10, undefined),
      () => directory.update('ana', { enabled: false }),
      () => directory.delete('ana'),
      () => directory.resetPassword('ana'),
      () => directory.countActivePlatformAdmins(),
      () => directory.create({ username: 'ana', email: 'ana@example.com', role: 'viewer', companies: ['acme'] }),
    ];
    for (const call of calls) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect((error as ServiceUnavailableError).retryAfterSeconds).toBeGreaterThan(0);
    }
  });
});
