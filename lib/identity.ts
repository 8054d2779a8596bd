/**
 * The token issuer on AWS: a Cognito user pool whose access tokens are what API Gateway's JWT authorizer verifies
 * (lib/constructs/http-apis.ts) and the handlers read (functions/platform/auth.ts): `client_id` is the app client id,
 * `scope` holds the user's scopes (space-separated) and `companies` is a JSON array, both added by the
 * pre-token-generation trigger from the user attributes `custom:role` (or, for users made before roles,
 * `custom:scope`) and `custom:companies`. Customizing access tokens needs the V2_0 trigger event, which needs the
 * Essentials or Plus feature plan (Lite only customizes ID tokens). The stack parameter AdminEmail invites the first
 * platform administrator, `admin`, who then manages users through the API.
 */
import { CfnParameter, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnUserPoolUser,
  ClientAttributes,
  FeaturePlan,
  LambdaVersion,
  Mfa,
  StandardThreatProtectionMode,
  StringAttribute,
  UserPool,
  type UserPoolClient,
  UserPoolOperation,
} from 'aws-cdk-lib/aws-cognito';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ROLE_ATTRIBUTE } from '../functions/contract/cognito-attributes.js';
import type { FunctionDefinition } from '../functions/contract/function.js';
import { PASSWORD_POLICY } from '../functions/core/access/password-policy.js';
import type { Role } from '../functions/core/access/roles.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_DAYS } from '../functions/core/access/user-tokens.js';
import { acknowledge } from './nag.js';
import { ServiceFunction } from './service-function.js';
import type { CognitoPlan } from './settings.js';

/** Lifetime of the access token the token endpoint returns (its `expires_in`, 900 s), as locally; ID tokens live as long. */
export const TOKEN_VALIDITY = Duration.seconds(ACCESS_TOKEN_LIFETIME_SECONDS);

/** Lifetime of a refresh token: the user signs in with their password again after it. */
export const REFRESH_TOKEN_VALIDITY = Duration.days(REFRESH_TOKEN_LIFETIME_DAYS);

/**
 * The pool's password policy: PASSWORD_POLICY (functions/core/access/password-policy.ts), which the local issuer checks
 * and the token endpoint states when it refuses a new password. A temporary password (an invitation's or a reset's)
 * must be replaced within 7 days (Cognito's default), after which an administrator resets it again.
 */
export const POOL_PASSWORD_POLICY = {
  minLength: PASSWORD_POLICY.minLength,
  requireLowercase: PASSWORD_POLICY.requireLowercase,
  requireUppercase: PASSWORD_POLICY.requireUppercase,
  requireDigits: PASSWORD_POLICY.requireDigits,
  requireSymbols: PASSWORD_POLICY.requireSymbols,
  tempPasswordValidity: Duration.days(7),
} as const;

/** Username of the first platform administrator, invited at the AdminEmail stack parameter's address. */
export const BOOTSTRAP_ADMIN_USERNAME = 'admin';

/** The role of the first administrator: they manage companies and every user. */
export const BOOTSTRAP_ADMIN_ROLE: Role = 'platform-admin';

/** The stack parameter naming the first platform administrator's email (logical id, as `--parameters` names it). */
export const ADMIN_EMAIL_PARAMETER = 'AdminEmail';

/** What AdminEmail accepts: one address, no spaces, at most 254 characters (the API's bound on emails). */
export const ADMIN_EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';

/** Settings of the identity construct. */
export interface IdentityProps {
  featurePlan: CognitoPlan;
  /** The pre-token-generation trigger's definition (its handler module, timeout and memory). */
  preTokenGeneration: FunctionDefinition;
  logLevel: string;
  logRetention: RetentionDays;
}

/**
 * User pool (administrator-created users only, username sign-in, POOL_PASSWORD_POLICY, no self-service recovery,
 * deletion protection, retained), its app client for the token endpoint (`USER_PASSWORD_AUTH` and refresh, no secret,
 * no OAuth flows, revocable tokens, users cannot write `custom:*` attributes), the trigger, and the first platform
 * administrator. The trigger function lives here, not in the stateless stack, because the pool references it.
 */
export class Identity extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly preTokenGeneration: ServiceFunction;
  /** `iss` of the pool's tokens: `https://cognito-idp.<region>.amazonaws.com/<pool id>` (JWT_ISSUER). */
  readonly issuer: string;
  /** The pool's public keys (JWKS_URL). */
  readonly jwksUrl: string;
  /** The stack parameter AdminEmail (ADMIN_EMAIL_PARAMETER). */
  readonly adminEmail: CfnParameter;
  /** The first platform administrator, `admin`, invited at AdminEmail. */
  readonly bootstrapAdmin: CfnUserPoolUser;

  constructor(scope: Construct, id: string, props: IdentityProps) {
    super(scope, id);
    const plus = props.featurePlan === 'PLUS';
    this.userPool = this.createUserPool(plus);
    const trigger = props.preTokenGeneration;
    this.preTokenGeneration = new ServiceFunction(this, 'PreTokenGenerationFunction', {
      entry: trigger.entry,
      description: trigger.entry,
      ...(trigger.access.timeoutSeconds === undefined ? {} : { timeout: Duration.seconds(trigger.access.timeoutSeconds) }),
      ...(trigger.access.memorySize === undefined ? {} : { memorySize: trigger.access.memorySize }),
      logLevel: props.logLevel,
      logRetention: props.logRetention,
    });
    // The V2_0 event customizes the access token (scopes, companies); Cognito requires the Essentials or Plus plan for it.
    this.userPool.addTrigger(UserPoolOperation.PRE_TOKEN_GENERATION_CONFIG, this.preTokenGeneration, LambdaVersion.V2_0);

    this.client = this.userPool.addClient('TokenEndpointClient', {
      // USER_PASSWORD_AUTH; the CDK adds ALLOW_REFRESH_TOKEN_AUTH to every client.
      authFlows: { userPassword: true },
      generateSecret: false,
      disableOAuth: true,
      preventUserExistenceErrors: true,
      // Global sign-out (disabling, deleting or resetting a user) revokes the user's refresh tokens.
      enableTokenRevocation: true,
      idTokenValidity: TOKEN_VALIDITY,
      accessTokenValidity: TOKEN_VALIDITY,
      refreshTokenValidity: REFRESH_TOKEN_VALIDITY,
      // Without this list a user could rewrite custom:role, custom:companies and custom:scope with their own access
      // token (Cognito's UpdateUserAttributes): only administrators (AdminUpdateUserAttributes) write them.
      writeAttributes: new ClientAttributes().withStandardAttributes({ fullname: true }),
    });

    this.issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${this.userPool.userPoolId}`;
    this.jwksUrl = `${this.issuer}/.well-known/jwks.json`;
    ({ parameter: this.adminEmail, user: this.bootstrapAdmin } = this.createBootstrapAdmin());

    this.acknowledgeFindings(plus);
  }

  /** The user pool (see the class comment). */
  private createUserPool(plus: boolean): UserPool {
    return new UserPool(this, 'UserPool', {
      selfSignUpEnabled: false,
      signInAliases: { username: true },
      signInCaseSensitive: false,
      passwordPolicy: { ...POOL_PASSWORD_POLICY },
      userInvitation: {
        emailSubject: 'Your device scenario service account',
        // Cognito requires both placeholders: the username and the temporary password.
        emailBody:
          'You have been invited to the device scenario service. Your username is {username} and your temporary password ' +
          `is {####}. Sign in within ${POOL_PASSWORD_POLICY.tempPasswordValidity.toDays()} days (dss login, or the console); you will ` +
          'be asked to choose your own password.',
      },
      mfa: Mfa.OFF,
      accountRecovery: AccountRecovery.NONE,
      customAttributes: {
        // Comma-separated company ids, space-separated legacy scopes and a role name; only administrators write them
        // (see the client). A custom attribute cannot be removed or changed once the pool exists, only added.
        companies: new StringAttribute({ minLen: 0, maxLen: 2048, mutable: true }),
        scope: new StringAttribute({ minLen: 0, maxLen: 2048, mutable: true }),
        role: new StringAttribute({ minLen: 0, maxLen: 64, mutable: true }),
        // Who disabled a disabled user, `<role>:<username>` (a role name and a username of at most 128 characters).
        disabledBy: new StringAttribute({ minLen: 0, maxLen: 256, mutable: true }),
      },
      featurePlan: plus ? FeaturePlan.PLUS : FeaturePlan.ESSENTIALS,
      ...(plus ? { standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION } : {}),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * The stack parameter AdminEmail (required on the first deployment; CloudFormation keeps the previous value after)
   * and the user `admin` it invites: email verified, `custom:role` platform-admin, the invitation emailed with a
   * temporary password. Retained like the pool, so that deleting the stack leaves the pool with its administrator.
   * Changing AdminEmail later replaces the user (deleted, then invited again at the new address).
   */
  private createBootstrapAdmin(): { parameter: CfnParameter; user: CfnUserPoolUser } {
    // On the stack itself, so that its logical id is the name `--parameters <stack>:AdminEmail=…` uses.
    const parameter = new CfnParameter(Stack.of(this), ADMIN_EMAIL_PARAMETER, {
      type: 'String',
      description:
        `Email of the first platform administrator, invited as '${BOOTSTRAP_ADMIN_USERNAME}' with a temporary password ` +
        '(docs/aws.md, "First company, first user, first token").',
      allowedPattern: ADMIN_EMAIL_PATTERN,
      maxLength: 254,
      constraintDescription: 'must be one email address, e.g. ops@example.com',
    });
    const user = new CfnUserPoolUser(this, 'BootstrapAdmin', {
      userPoolId: this.userPool.userPoolId,
      username: BOOTSTRAP_ADMIN_USERNAME,
      desiredDeliveryMediums: ['EMAIL'],
      userAttributes: [
        { name: 'email', value: parameter.valueAsString },
        { name: 'email_verified', value: 'true' },
        { name: ROLE_ATTRIBUTE, value: BOOTSTRAP_ADMIN_ROLE },
      ],
    });
    user.applyRemovalPolicy(RemovalPolicy.RETAIN);
    return { parameter, user };
  }

  private acknowledgeFindings(plus: boolean): void {
    acknowledge(
      this.userPool,
      'AwsSolutions-COG2',
      'MFA is off because the token endpoint contract is username and password in one request (docs/contract.md, POST {auth_url}/token) ' +
        'for kiosk tooling and scripts; an MFA challenge would need a second step the contract does not have. Users are created ' +
        `by administrators only, passwords need ${PASSWORD_POLICY.minLength} characters of every class, and the auth API is throttled.`,
    );
    if (!plus) {
      acknowledge(
        this.userPool,
        'AwsSolutions-COG8',
        'Essentials is the cheapest plan that delivers the V2_0 pre-token-generation event (access token customization: the ' +
          'scopes the API Gateway authorizer checks, and the companies claim); Plus adds threat ' +
          'protection at a higher price per monthly active user and no free tier. Deploy with -c cognitoFeaturePlan=PLUS to turn it on.',
      );
    }
  }
}
