/**
 * Who signs tokens, in the composition root: the local issuer (users and devices, one key in LOCAL_AUTH_DIR), the
 * device issuer on AWS (a KMS key), and the secret checks' attempt store and gate shared by both token grants.
 */
import { DynamoDbClientFailureStore } from '../../adapters/aws/dynamodb-client-failure-store.js';
import {
  KmsDeviceIssuerKeys,
  KmsDeviceTokenSigner,
  openIdConfiguration,
  runtimeKmsClient,
} from '../../adapters/aws/kms-device-token-signer.js';
import { LocalIdentityProvider } from '../../adapters/embedded/local-identity-provider.js';
import { BoundedVerificationGate } from '../../adapters/verification-gate.js';
import { ENV } from '../../contract/environment.js';
import type { ClientFailurePolicy } from '../../core/access/client-failures.js';
import type { ClientFailureStore, VerificationGate } from '../../core/access/ports.js';
import type { DeviceTokenSigner } from '../../core/devices/ports.js';
import { clientFailuresConfig, deviceIssuerConfig, localIssuerConfig } from '../config.js';
import { traced } from '../observability.js';
import { storage } from './storage.js';

let identity: Promise<LocalIdentityProvider> | undefined;

/**
 * The token issuer. Locally: the LocalIdentityProvider in `LOCAL_AUTH_DIR`, issuing for `JWT_ISSUER`/`JWT_AUDIENCE`
 * tokens valid `TOKEN_LIFETIME_SECONDS`.
 * @throws EnvironmentError naming LOCAL_AUTH_DIR when it is not set (in AWS the token endpoint is backed by Cognito),
 *   or another missing or malformed variable of the local issuer.
 */
export function identityProvider(): Promise<LocalIdentityProvider> {
  if (identity === undefined) {
    const config = localIssuerConfig();
    identity = LocalIdentityProvider.fromDirectory(config.directory, {
      issuer: config.issuer,
      audience: config.audience,
      tokenLifetimeSeconds: config.tokenLifetimeSeconds,
    });
  }
  return identity;
}

/**
 * The signer of device tokens (client credentials grant). On AWS (DEVICE_TOKEN_KEY_ARN set): the KMS key of the device
 * issuer. Locally: the LocalIdentityProvider's key, so that device tokens verify against the same JWKS as user tokens.
 * @throws EnvironmentError as identityProvider() does.
 */
export async function deviceTokenSigner(): Promise<DeviceTokenSigner> {
  // On AWS the key stays in KMS: the token function only holds the key's ARN and may only ask KMS to sign.
  if (process.env[ENV.deviceTokenKeyArn] !== undefined) return (await awsDeviceIssuer()).signer;
  return identityProvider();
}

/**
 * What secret checks need besides the credentials (functions/core/access/client-failures.ts, CheckLimits): the client
 * credentials grant's, and the local issuer's password checks.
 */
export interface ClientAuthentication {
  /** Attempts per key (client id or username, and source), on CLIENT_FAILURES_TABLE. */
  failures: ClientFailureStore;
  /** This process's admission and ordering of secret hashes (one per process: it bounds the process's hashing). */
  gate: VerificationGate;
  /** CLIENT_FAILURE_LIMIT failures in CLIENT_FAILURE_WINDOW_SECONDS. */
  policy: ClientFailurePolicy;
}

let clientAuthenticationParts: ClientAuthentication | undefined;

/**
 * The secret checks' attempt store (DynamoDbClientFailureStore on storage()'s DynamoDB client), their
 * verification gate (BoundedVerificationGate with DEFAULT_GATE_OPTIONS, the window as how long a failed source stays
 * suspect) and its policy, built once.
 * @throws EnvironmentError naming each missing or malformed variable of the `clientFailures` (or `storage`) group.
 */
export function clientAuthentication(): ClientAuthentication {
  if (clientAuthenticationParts === undefined) {
    const config = clientFailuresConfig();
    clientAuthenticationParts = {
      failures: new DynamoDbClientFailureStore(storage().dynamoDb, config.tableName),
      gate: new BoundedVerificationGate({ suspectForMs: config.policy.windowMs }),
      policy: config.policy,
    };
  }
  return clientAuthenticationParts;
}

/** The device token issuer on AWS: a KMS key signs device tokens, and its public half is the issuer's key set. */
export interface AwsDeviceIssuer {
  /** Signs device tokens (KMS Sign; the function needs kms:Sign on the key). */
  signer: DeviceTokenSigner;
  /** The issuer's key set (KMS GetPublicKey, once per cold start; the function needs kms:GetPublicKey). */
  keys: KmsDeviceIssuerKeys;
  /** `iss` of device tokens: `{auth_url}/device`. */
  issuer: string;
  /** The issuer's OpenID discovery document, naming `tokenEndpoint` as where devices obtain tokens. */
  discovery(tokenEndpoint: string): Record<string, unknown>;
}

let awsIssuer: Promise<AwsDeviceIssuer> | undefined;

/**
 * The device issuer on AWS, built once: KmsDeviceTokenSigner and KmsDeviceIssuerKeys on the key DEVICE_TOKEN_KEY_ARN,
 * for DEVICE_TOKEN_ISSUER and DEVICE_TOKEN_AUDIENCE.
 * @throws EnvironmentError naming each missing or malformed variable of the `deviceIssuer` group (unset locally,
 *   where the local issuer signs device tokens).
 */
export function awsDeviceIssuer(): Promise<AwsDeviceIssuer> {
  if (awsIssuer === undefined) {
    const config = deviceIssuerConfig();
    awsIssuer = runtimeKmsClient().then((client) => {
      const kms = traced(client);
      return {
        signer: new KmsDeviceTokenSigner(kms, config),
        keys: new KmsDeviceIssuerKeys(kms, config.keyArn),
        issuer: config.issuer,
        discovery: (tokenEndpoint: string) => openIdConfiguration(config.issuer, tokenEndpoint),
      };
    });
    awsIssuer.catch(() => {
      awsIssuer = undefined;
    });
  }
  return awsIssuer;
}
