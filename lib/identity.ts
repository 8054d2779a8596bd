/**
 * The token issuer on AWS: a Cognito user pool whose access tokens are what API Gateway's JWT authorizer verifies
 * (lib/constructs/http-apis.ts) and the handlers read (functions/platform/auth.ts): `client_id` is the app client id,
 * `scope` holds the user's scopes (space-separated) and `companies` is a JSON array, both added by the
 * pre-token-generation trigger from the user attributes `custom:scope` and `custom:companies`. Customizing access
 * tokens needs the V2_0 trigger event, which needs the Essentials or Plus feature plan (Lite only customizes ID tokens).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccountRecovery,
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
import type { FunctionDefinition } from '../functions/contract/function.js';
import { PASSWORD_POLICY } from '../functions/core/access/password-policy.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_DAYS } from '../functions/core/access/user-tokens.js';
import { acknowledge } from './nag.js';
import { ServiceFunction } from './service-function.js';
import type { CognitoPlan } from './settings.js';

/** Lifetime of the access token the token endpoint returns (its `expires_in`), as locally; ID tokens live as long. */
export const TOKEN_VALIDITY = Duration.seconds(ACCESS_TOKEN_LIFETIME_SECONDS);

/** Lifetime of the refresh token a sign-in returns, as locally. */
export const REFRESH_TOKEN_VALIDITY = Duration.days(REFRESH_TOKEN_LIFETIME_DAYS);

/** Settings of the identity construct. */
export interface IdentityProps {
  featurePlan: CognitoPlan;
  /** The pre-token-generation trigger's definition (its handler module, timeout and memory). */
  preTokenGeneration: FunctionDefinition;
  logLevel: string;
  logRetention: RetentionDays;
}

/**
 * User pool (administrator-created users only, username sign-in, the service's password policy (PASSWORD_POLICY:
 * Cognito's default, stated), no self-service recovery, deletion protection, retained), its app client for the token
 * endpoint (`USER_PASSWORD_AUTH` and refresh, no secret, no OAuth flows, users cannot write `custom:*` attributes)
 * and the trigger.
 * The trigger function lives here, not in the stateless stack, because the pool references it.
 */
export class Identity extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly preTokenGeneration: ServiceFunction;
  /** `iss` of the pool's tokens: `https://cognito-idp.<region>.amazonaws.com/<pool id>` (JWT_ISSUER). */
  readonly issuer: string;
  /** The pool's public keys (JWKS_URL). */
  readonly jwksUrl: string;

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
      authFlows: { userPassword: true },
      generateSecret: false,
      disableOAuth: true,
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: TOKEN_VALIDITY,
      accessTokenValidity: TOKEN_VALIDITY,
      refreshTokenValidity: REFRESH_TOKEN_VALIDITY,
      // Without this list a user could rewrite custom:companies and custom:scope with their own access token.
      writeAttributes: new ClientAttributes().withStandardAttributes({ fullname: true }),
    });

    this.issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${this.userPool.userPoolId}`;
    this.jwksUrl = `${this.issuer}/.well-known/jwks.json`;

    this.acknowledgeFindings(plus);
  }

  /** The user pool (see the class comment). */
  private createUserPool(plus: boolean): UserPool {
    return new UserPool(this, 'UserPool', {
      selfSignUpEnabled: false,
      signInAliases: { username: true },
      signInCaseSensitive: false,
      passwordPolicy: {
        // Checked locally by the same constants (missingFromPassword); Cognito's own maximum length is PASSWORD_POLICY.maxLength.
        minLength: PASSWORD_POLICY.minLength,
        requireLowercase: PASSWORD_POLICY.requireLowercase,
        requireUppercase: PASSWORD_POLICY.requireUppercase,
        requireDigits: PASSWORD_POLICY.requireDigits,
        requireSymbols: PASSWORD_POLICY.requireSymbols,
        tempPasswordValidity: Duration.days(3),
      },
      mfa: Mfa.OFF,
      accountRecovery: AccountRecovery.NONE,
      customAttributes: {
        // Comma-separated company ids and space-separated scopes; only administrators write them (see the client).
        companies: new StringAttribute({ minLen: 0, maxLen: 2048, mutable: true }),
        scope: new StringAttribute({ minLen: 0, maxLen: 2048, mutable: true }),
      },
      featurePlan: plus ? FeaturePlan.PLUS : FeaturePlan.ESSENTIALS,
      ...(plus ? { standardThreatProtectionMode: StandardThreatProtectionMode.FULL_FUNCTION } : {}),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
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
