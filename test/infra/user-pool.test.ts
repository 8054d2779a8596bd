/**
 * Users administration on AWS: the user pool's settings the token endpoint and administration rely on (the role
 * attribute, which users cannot write; the password policy; token lifetimes, flows and revocation), the first
 * platform administrator invited from the AdminEmail parameter, and the grants of `access.userPool`: exactly the listed
 * `cognito-idp` actions, on this pool only, with COGNITO_USER_POOL_ID, and no Cognito administration for any other
 * function: for a fixture route beside the service's own, and for the service's users and companies administration
 * functions.
 */

import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_USER_ACTIONS, USER_COUNT_ACTIONS, USER_DIRECTORY_ACTIONS } from '../../functions/contract/cognito-attributes.js';
import { ENV, readEnvironment } from '../../functions/contract/environment.js';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { adminCompanyGet } from '../../functions/contract/routes/admin.js';
import { adminApiClientCreate } from '../../functions/contract/routes/admin-api-clients.js';
import { adminAuditList } from '../../functions/contract/routes/admin-audit.js';
import { adminUserCreate } from '../../functions/contract/routes/admin-users.js';
import { PASSWORD_POLICY } from '../../functions/core/access/password-policy.js';
import { ADMIN_EMAIL_PATTERN } from '../../lib/identity.js';
import {
  accessByEntry,
  asArray,
  DEPLOYED_USER_POOL_ID,
  functionsByEntry,
  quickStage,
  type Resource,
  resourcesOf,
  rolePoliciesOf,
  SERVICE,
  type Statement,
  statementsOf,
} from './template-helpers.js';

/** A route whose function administers users: it lists two Cognito actions. */
const FIXTURE_ROUTE: RouteDefinition = {
  id: 'FixtureUsersList',
  api: 'main',
  method: 'GET',
  path: '/fixture-users',
  scope: 'users:read',
  entry: 'test/infra/fixtures/user-pool-route.ts',
  access: { storage: false, userPool: ['AdminCreateUser', 'ListUsers'] },
};

/** The `cognito-idp` actions of a function's role, by resource (as its JSON), each list sorted. */
function cognitoGrantsOf(template: Template, fn: Resource): Record<string, string[]> {
  const grants: Record<string, string[]> = {};
  for (const [, policy] of rolePoliciesOf(template, fn)) {
    for (const statement of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) {
      const actions = asArray(statement.Action).filter((action) => action.startsWith('cognito-idp:'));
      if (actions.length === 0) continue;
      expect(statement.Effect).toBe('Allow');
      for (const resource of asArray(statement.Resource))
        grants[JSON.stringify(resource)] = [...(grants[JSON.stringify(resource)] ?? []), ...actions].sort();
    }
  }
  return grants;
}

describe('the user pool', () => {
  let stateful: Template;
  let stateless: Template;
  let functions: Map<string, [string, Resource]>;
  let poolId: string;

  beforeAll(() => {
    ({ stateful, stateless } = quickStage({}, { ...SERVICE, routes: [...SERVICE.routes, FIXTURE_ROUTE] }));
    functions = functionsByEntry(stateless);
    [[poolId]] = resourcesOf(stateful, 'AWS::Cognito::UserPool') as [[string, Resource]];
  });

  it('holds each user’s role in custom:role, mutable, beside their companies, legacy scopes and who disabled them', () => {
    const [[, pool]] = resourcesOf(stateful, 'AWS::Cognito::UserPool') as [[string, Resource]];
    const schema = pool.Properties?.Schema as { Name: string; Mutable: boolean; AttributeDataType: string }[];
    for (const name of ['role', 'companies', 'scope', 'disabledBy']) {
      expect(
        schema.find((attribute) => attribute.Name === name),
        name,
      ).toMatchObject({ Mutable: true, AttributeDataType: 'String' });
    }
  });

  it('sets the password policy the token endpoint checks (PASSWORD_POLICY) explicitly, temporary passwords valid 7 days', () => {
    const [[, pool]] = resourcesOf(stateful, 'AWS::Cognito::UserPool') as [[string, Resource]];
    expect((pool.Properties?.Policies as { PasswordPolicy: unknown }).PasswordPolicy).toEqual({
      MinimumLength: PASSWORD_POLICY.minLength,
      RequireLowercase: true,
      RequireUppercase: true,
      RequireNumbers: true,
      RequireSymbols: true,
      TemporaryPasswordValidityDays: 7,
    });
    // The invitation Cognito emails names the username and the temporary password (both placeholders are required).
    const invitation = (pool.Properties?.AdminCreateUserConfig as { InviteMessageTemplate: { EmailMessage: string } })
      .InviteMessageTemplate;
    expect(invitation.EmailMessage).toContain('{username}');
    expect(invitation.EmailMessage).toContain('{####}');
  });

  it('issues 15-minute access tokens and 30-day refresh tokens, signs in with the password or a refresh token, and can revoke them', () => {
    const [[, client]] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient') as [[string, Resource]];
    expect(client.Properties).toMatchObject({
      ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      AccessTokenValidity: 15,
      IdTokenValidity: 15,
      RefreshTokenValidity: 30 * 24 * 60,
      TokenValidityUnits: { AccessToken: 'minutes', IdToken: 'minutes', RefreshToken: 'minutes' },
      EnableTokenRevocation: true,
    });
  });

  it('lets no user write the attributes that grant anything (custom:role, custom:companies, custom:scope)', () => {
    const [[, client]] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient') as [[string, Resource]];
    const writable = client.Properties?.WriteAttributes as string[];
    expect(writable.length).toBeGreaterThan(0);
    for (const attribute of ['custom:role', 'custom:companies', 'custom:scope', 'custom:disabledBy'])
      expect(writable).not.toContain(attribute);
    expect(writable.filter((attribute) => attribute.startsWith('custom:'))).toEqual([]);
  });

  it('invites the first platform administrator, admin, at the AdminEmail parameter, and keeps them with the pool', () => {
    const parameter = (stateful.toJSON() as { Parameters: Record<string, { Type: string; AllowedPattern: string; Default?: string }> })
      .Parameters.AdminEmail;
    expect(parameter).toMatchObject({ Type: 'String', AllowedPattern: ADMIN_EMAIL_PATTERN });
    // Required: no default, so the first deployment cannot forget it.
    expect(parameter?.Default).toBeUndefined();
    const pattern = new RegExp(parameter?.AllowedPattern as string);
    for (const email of ['ops@example.com', 'first.last+dss@sub.example.co.uk']) expect(email, email).toMatch(pattern);
    for (const wrong of ['', 'ops', 'ops@example', 'two words@example.com', 'a@b.com, c@d.com']) expect(wrong, wrong).not.toMatch(pattern);

    const users = resourcesOf(stateful, 'AWS::Cognito::UserPoolUser');
    expect(users).toHaveLength(1);
    const [[, admin]] = users as [[string, Resource]];
    expect(admin.DeletionPolicy).toBe('Retain');
    expect(admin.Properties).toEqual({
      UserPoolId: { Ref: poolId },
      Username: 'admin',
      DesiredDeliveryMediums: ['EMAIL'],
      UserAttributes: [
        { Name: 'email', Value: { Ref: 'AdminEmail' } },
        { Name: 'email_verified', Value: 'true' },
        { Name: 'custom:role', Value: 'platform-admin' },
      ],
    });
  });

  it('grants a function exactly the Cognito actions its access lists, on this pool only, with the pool id', () => {
    const [, fn] = functions.get(FIXTURE_ROUTE.entry) as [string, Resource];
    const grants = cognitoGrantsOf(stateless, fn);
    expect(Object.values(grants)).toEqual([['cognito-idp:AdminCreateUser', 'cognito-idp:ListUsers']]);
    // The resource is the stateful stack's pool ARN (an import of its Arn attribute), nothing wider.
    const [resource] = Object.keys(grants) as [string];
    expect(resource).toMatch(new RegExp(`^\\{"Fn::ImportValue":"[^"]*ExportsOutputFnGetAtt${poolId}Arn[0-9A-F]{8}"\\}$`));

    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(variables[ENV.cognitoUserPoolId])).toContain(`ExportsOutputRef${poolId}`);
    // What it resolves to once deployed is what the function's configuration reads.
    expect(readEnvironment('userPool', { [ENV.cognitoUserPoolId]: DEPLOYED_USER_POOL_ID })[ENV.cognitoUserPoolId]).toBe(
      DEPLOYED_USER_POOL_ID,
    );
  });

  it('grants no Cognito action and no pool id to any other function, in either stack', () => {
    const declaring = new Set(
      [...accessByEntry({ ...SERVICE, routes: [...SERVICE.routes, FIXTURE_ROUTE] })]
        .filter(([, access]) => (access.userPool ?? []).length > 0)
        .map(([entry]) => entry),
    );
    expect(declaring.has(FIXTURE_ROUTE.entry)).toBe(true);
    for (const [entry, [id, fn]] of functions) {
      if (declaring.has(entry)) continue;
      expect(cognitoGrantsOf(stateless, fn), `${entry} (${id})`).toEqual({});
      expect(
        (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables[ENV.cognitoUserPoolId],
        entry,
      ).toBeUndefined();
    }
    // Statements outside the functions' roles (the stateful stack's, the CDK's own) name no Cognito action either.
    const declaringPolicies = new Set(
      [...declaring].flatMap((entry) => rolePoliciesOf(stateless, (functions.get(entry) as [string, Resource])[1]).map(([id]) => id)),
    );
    for (const template of [stateful, stateless]) {
      for (const [id, statement] of statementsOf(template)) {
        if (declaringPolicies.has(id)) continue;
        expect(
          asArray(statement.Action).filter((action) => action.startsWith('cognito-idp:')),
          id,
        ).toEqual([]);
      }
    }
  });

  it("grants the users administration function every action of the user directory, the companies one ListUsers and the caller's user, the audit and API clients ones the caller's user, on the pool only, and no other function any", () => {
    const { stateless: service } = quickStage();
    const serviceFunctions = functionsByEntry(service);
    const poolArn = new RegExp(`^\\{"Fn::ImportValue":"[^"]*ExportsOutputFnGetAtt${poolId}Arn[0-9A-F]{8}"\\}$`);
    const expected: Record<string, readonly string[]> = {
      [adminUserCreate.entry]: USER_DIRECTORY_ACTIONS,
      [adminCompanyGet.entry]: [...USER_COUNT_ACTIONS, ...CURRENT_USER_ACTIONS],
      [adminAuditList.entry]: CURRENT_USER_ACTIONS,
      [adminApiClientCreate.entry]: CURRENT_USER_ACTIONS,
    };
    for (const [entry, [id, fn]] of serviceFunctions) {
      const grants = cognitoGrantsOf(service, fn);
      const actions = expected[entry];
      if (actions === undefined) {
        expect(grants, `${entry} (${id})`).toEqual({});
        continue;
      }
      expect(Object.keys(grants), entry).toHaveLength(1);
      expect(Object.keys(grants)[0], entry).toMatch(poolArn);
      expect(Object.values(grants)[0], entry).toEqual(actions.map((action) => `cognito-idp:${action}`).sort());
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(variables[ENV.cognitoUserPoolId]), entry).toContain(`ExportsOutputRef${poolId}`);
    }
  });
});
