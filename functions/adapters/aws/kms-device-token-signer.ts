/**
 * The device token issuer on AWS: an asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) signs every device token, so
 * the private key never reaches function code, its environment or its memory. KmsDeviceTokenSigner signs (ES256:
 * the SHA-256 digest computed here, KMS Sign with ECDSA_SHA_256 on that digest, its DER signature turned into the
 * JWS form r||s); KmsDeviceIssuerKeys publishes the public half (KMS GetPublicKey, SPKI DER → JWK); and
 * openIdConfiguration is the discovery document API Gateway's JWT authorizer reads at
 * `{issuer}/.well-known/openid-configuration` to find that key set.
 */
import { createHash, createPublicKey, type JsonWebKey } from 'node:crypto';
import { ulid } from 'ulid';
import { ROLES } from '../../core/access/roles.js';
import type { DeviceTokenSigner } from '../../core/devices/ports.js';
import { ServiceUnavailableError } from '../../core/shared/errors.js';
import { DEVICE_SCOPE } from '../../core/shared/principal.js';

/** The part of the KMS client (the SDK's aggregated `KMS` class) the signer calls. */
export interface KmsSignApi {
  sign(input: {
    KeyId: string;
    Message: Uint8Array;
    MessageType: 'DIGEST';
    SigningAlgorithm: 'ECDSA_SHA_256';
  }): Promise<{ Signature?: Uint8Array | undefined }>;
}

/** The part of the KMS client the key set calls. */
export interface KmsPublicKeyApi {
  getPublicKey(input: { KeyId: string }): Promise<{ PublicKey?: Uint8Array | undefined; KeySpec?: string | undefined }>;
}

/**
 * The KMS client module. Like every `@aws-sdk/*` module it is not bundled: the Lambda Node.js runtime provides it
 * (lib/service-function.ts). It is not a dependency of this repository either (nothing local talks to KMS), so it is
 * imported by name at run time, on AWS only; tests pass their own KmsSignApi / KmsPublicKeyApi.
 */
const KMS_CLIENT_MODULE = '@aws-sdk/client-kms';

/**
 * A KMS client from the runtime's AWS SDK (the function role's credentials and region), with the SDK's retries.
 * @throws Error when the module is missing (outside Lambda, unless installed).
 */
export async function runtimeKmsClient(): Promise<KmsSignApi & KmsPublicKeyApi> {
  const sdk = (await import(KMS_CLIENT_MODULE)) as { KMS: new (config: { maxAttempts: number }) => KmsSignApi & KmsPublicKeyApi };
  return new sdk.KMS({ maxAttempts: 3 });
}

/** Where the device issuer publishes its key set, relative to the issuer (`{issuer}/.well-known/jwks.json`). */
export const DEVICE_JWKS_PATH = '/.well-known/jwks.json';

/** Where the discovery document is, relative to the issuer: the path API Gateway's JWT authorizer fetches. */
export const DEVICE_DISCOVERY_PATH = '/.well-known/openid-configuration';

/** KMS errors that say "try again later" (throttling, a dependency or KMS itself briefly unavailable). */
const RETRYABLE_KMS_ERRORS = new Set([
  'ThrottlingException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'KeyUnavailableException',
]);

/**
 * The `kid` of every token and of the published key: the KMS key id (the UUID ending the key ARN). It is stable for
 * the key's life and derived from the ARN alone, so the signer needs no GetPublicKey permission to name its key; a
 * new key (a re-created stack) gets a new kid.
 * @throws Error when `keyArn` is not a KMS key ARN (`arn:<partition>:kms:<region>:<account>:key/<id>`).
 */
export function keyIdOf(keyArn: string): string {
  const match = /^arn:[a-z-]+:kms:[a-z0-9-]+:\d{12}:key\/([A-Za-z0-9-]+)$/.exec(keyArn);
  if (match === null) throw new Error(`Not a KMS key ARN: '${keyArn}'.`);
  return match[1] as string;
}

/**
 * Converts a DER-encoded ECDSA signature (`SEQUENCE { INTEGER r, INTEGER s }`, what KMS returns) to the JWS form
 * (RFC 7518 §3.4): r and s as unsigned big-endian integers of `size` bytes each, concatenated. DER integers are
 * minimal and signed, so each may be shorter (leading zeros dropped) or one byte longer (a 0x00 before a high bit)
 * than `size`.
 * @param size bytes per integer: 32 for P-256 (ES256).
 * @throws Error when `der` is not such a signature or an integer does not fit in `size` bytes.
 */
export function derToJoseSignature(der: Uint8Array, size = 32): Buffer {
  const bytes = Buffer.from(der);
  let offset = 0;
  const fail = (why: string): never => {
    throw new Error(`Malformed DER ECDSA signature (${why}).`);
  };
  const readLength = (): number => {
    const first = bytes[offset++] ?? fail('truncated length');
    if (first < 0x80) return first;
    const count = first & 0x7f;
    if (count === 0 || count > 2) fail('unsupported length');
    let length = 0;
    for (let index = 0; index < count; index++) length = (length << 8) | (bytes[offset++] ?? fail('truncated length'));
    return length;
  };
  if (bytes[offset++] !== 0x30) fail('not a SEQUENCE');
  if (readLength() !== bytes.length - offset) fail('SEQUENCE length');
  const integers: Buffer[] = [];
  for (const name of ['r', 's']) {
    if (bytes[offset++] !== 0x02) fail(`${name} is not an INTEGER`);
    const length = readLength();
    if (length === 0 || offset + length > bytes.length) fail(`${name} length`);
    let value = bytes.subarray(offset, offset + length);
    offset += length;
    // A leading 0x00 only keeps a positive integer's high bit from reading as a sign.
    while (value.length > 1 && value[0] === 0) value = value.subarray(1);
    if (value.length > size) fail(`${name} longer than ${size} bytes`);
    integers.push(Buffer.concat([Buffer.alloc(size - value.length), value]));
  }
  if (offset !== bytes.length) fail('trailing bytes');
  return Buffer.concat(integers);
}

/** base64url without padding (RFC 7515 §2). */
function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** Maps a KMS failure a retry can cure to 503; anything else (access denied, disabled key) is rethrown as it is. */
function kmsFailure(error: unknown, operation: string): never {
  const name = (error as { name?: string }).name ?? '';
  if (RETRYABLE_KMS_ERRORS.has(name)) {
    throw new ServiceUnavailableError(`The token signing service is briefly unavailable (${operation}); retry shortly.`, 2);
  }
  throw error;
}

/** What a KMS-backed issuer signs for: the key, and the `iss` and `aud` of every token. */
export interface KmsIssuerSettings {
  /** ARN of the ECC_NIST_P256 SIGN_VERIFY key. */
  keyArn: string;
  /** `iss` of device tokens: `{auth_url}/device` on AWS. */
  issuer: string;
  /** `aud` of device tokens: the audience the device routes' JWT authorizer expects. */
  audience: string;
}

/**
 * DeviceTokenSigner on KMS: ES256 JWTs whose signature KMS computes (one Sign call per token, on the SHA-256 digest of
 * the JWS signing input). The header names the key (`kid` = keyIdOf(keyArn)).
 */
export class KmsDeviceTokenSigner implements DeviceTokenSigner {
  private readonly kid: string;

  constructor(
    private readonly kms: KmsSignApi,
    private readonly settings: KmsIssuerSettings,
    /** Current time, ms since the epoch (tests pin it). */
    private readonly now: () => number = Date.now,
  ) {
    this.kid = keyIdOf(settings.keyArn);
  }

  /**
   * Signs `claims` plus `iss`, `aud`, `iat`, `nbf` (= iat), `exp` (= iat + lifetimeSeconds) and a fresh ULID `jti`;
   * those registered claims always win over members of `claims` with the same names.
   * @throws ServiceUnavailableError (503) when KMS throttles or is briefly unavailable.
   * @throws Error when KMS refuses (access denied, disabled or deleted key) or answers without a valid signature.
   */
  // `object`, not a record type: any claims interface (without an index signature) is accepted as it is.
  async sign(claims: object, lifetimeSeconds: number): Promise<string> {
    const issuedAt = Math.floor(this.now() / 1000);
    const header = { alg: 'ES256', typ: 'JWT', kid: this.kid };
    const payload = {
      ...claims,
      iss: this.settings.issuer,
      aud: this.settings.audience,
      iat: issuedAt,
      nbf: issuedAt,
      exp: issuedAt + lifetimeSeconds,
      jti: ulid(),
    };
    const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    // KMS would hash a RAW message itself, but only up to 4 KB and sent whole; the 32-byte digest is all it needs.
    const digest = createHash('sha256').update(signingInput).digest();
    let signature: Uint8Array | undefined;
    try {
      ({ Signature: signature } = await this.kms.sign({
        KeyId: this.settings.keyArn,
        Message: digest,
        MessageType: 'DIGEST',
        SigningAlgorithm: 'ECDSA_SHA_256',
      }));
    } catch (error) {
      kmsFailure(error, 'Sign');
    }
    if (signature === undefined) throw new Error('KMS answered Sign without a signature.');
    return `${signingInput}.${base64url(derToJoseSignature(signature))}`;
  }
}

/** A public JSON Web Key of the device issuer. */
export type DevicePublicJwk = JsonWebKey & { kty: 'EC'; crv: 'P-256'; x: string; y: string; kid: string; alg: 'ES256'; use: 'sig' };

/**
 * The device issuer's key set from KMS GetPublicKey (the SPKI DER of the key, converted to a JWK). Fetched once per
 * instance, i.e. per cold start when the composition root builds one; a failed fetch is not remembered, so the next
 * request asks again.
 */
export class KmsDeviceIssuerKeys {
  private keys: Promise<{ keys: DevicePublicJwk[] }> | undefined;

  constructor(
    private readonly kms: KmsPublicKeyApi,
    private readonly keyArn: string,
  ) {}

  /**
   * `{ keys: [the key as a JWK, kid = keyIdOf(keyArn), alg ES256, use sig] }`.
   * @throws ServiceUnavailableError (503) when KMS throttles or is briefly unavailable.
   * @throws Error when the key is not an ECC_NIST_P256 key or KMS refuses.
   */
  jwks(): Promise<{ keys: DevicePublicJwk[] }> {
    if (this.keys === undefined) {
      this.keys = this.fetch();
      this.keys.catch(() => {
        this.keys = undefined;
      });
    }
    return this.keys;
  }

  private async fetch(): Promise<{ keys: DevicePublicJwk[] }> {
    let output: Awaited<ReturnType<KmsPublicKeyApi['getPublicKey']>>;
    try {
      output = await this.kms.getPublicKey({ KeyId: this.keyArn });
    } catch (error) {
      kmsFailure(error, 'GetPublicKey');
    }
    if (output.PublicKey === undefined) throw new Error('KMS answered GetPublicKey without a public key.');
    if (output.KeySpec !== undefined && output.KeySpec !== 'ECC_NIST_P256') {
      throw new Error(`The device token key must be ECC_NIST_P256 (ES256); KMS says ${output.KeySpec}.`);
    }
    const jwk = createPublicKey({ key: Buffer.from(output.PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' });
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || jwk.x === undefined || jwk.y === undefined) {
      throw new Error('The device token key is not a P-256 public key.');
    }
    return { keys: [{ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: keyIdOf(this.keyArn), alg: 'ES256', use: 'sig' }] };
  }
}

/**
 * The OpenID Provider discovery document of the device issuer (OpenID Connect Discovery 1.0 §3), as far as a JWT
 * verifier needs it: `issuer` (exactly the tokens' `iss`) and `jwks_uri` (`{issuer}/.well-known/jwks.json`); the
 * token endpoint is the service's `{auth_url}/token` (client credentials), for devices and API clients alike, whose
 * scopes it lists: an OAuth library pointed at the device issuer configures itself from it (RFC 8414 §3.3: it is
 * served at `{issuer}/.well-known/openid-configuration`).
 * @param issuer the device issuer, without a trailing slash.
 * @param tokenEndpoint where devices and API clients obtain tokens.
 */
export function openIdConfiguration(issuer: string, tokenEndpoint: string): Record<string, unknown> {
  return {
    issuer,
    jwks_uri: `${issuer}${DEVICE_JWKS_PATH}`,
    token_endpoint: tokenEndpoint,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    id_token_signing_alg_values_supported: ['ES256'],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    scopes_supported: [DEVICE_SCOPE, ...ROLES.operator],
  };
}
