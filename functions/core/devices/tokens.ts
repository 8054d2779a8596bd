/**
 * Device credentials and the OAuth 2.0 client credentials grant (RFC 6749 §4.4): a device authenticates with its
 * client id (`{company}~{deviceId}`) and secret (§2.3.1; the token endpoint reads them from the form or from HTTP
 * Basic) and gets a short-lived token that acts only as that device (DEVICE_SCOPE).
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { type CheckLimits, type CheckRefusals, clientFailureKey, clientSourceOf, limitedCheck } from '../access/client-failures.js';
import { OAuthError } from '../shared/errors.js';
import { DEVICE_SCOPE } from '../shared/principal.js';
import { type DeviceCredential, parseDeviceClientId } from './model.js';
import type { DeviceRepository, DeviceTokenSigner } from './ports.js';

const scrypt = promisify(scryptCallback) as (
  secret: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/**
 * scrypt cost of device secrets: N = 4096, r = 8 (4 MiB, about 10 ms on one core). A password needs a high cost
 * because people choose guessable ones; a device secret is 256 random bits, which no amount of guessing finds, so
 * the hash only keeps a copy of the table from being a list of usable secrets. A low cost keeps each token request
 * cheap: 1,000 devices asking at once cost about 10 CPU-seconds, not the minute a password-grade cost would.
 */
const SECRET_SCRYPT = { N: 4_096, r: 8, p: 1, length: 32 } as const;
/** Highest cost a stored hash may ask for (a tampered hash must not make a request allocate gigabytes). */
const MAX_SCRYPT_MEMORY_BYTES = 64 * 1024 * 1024;

/** Random bytes of a device secret (256 bits), shown once as base64url (43 characters). */
const SECRET_BYTES = 32;

/** Longest client id, characters: `{companyId}~{deviceId}`, two ids of at most 128 characters and the separator. */
export const MAX_CLIENT_ID_LENGTH = 257;

/** Longest client secret checked against a hash, characters (issued secrets have 43): a longer one is wrong. */
export const MAX_CLIENT_SECRET_LENGTH = 256;

/** Hashes a device secret into `scrypt$N$r$p$salt$hash` (base64 salt and hash). */
export async function hashDeviceSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, length } = SECRET_SCRYPT;
  const hash = await scrypt(secret, salt, length, { N, r, p, maxmem: MAX_SCRYPT_MEMORY_BYTES });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Checks a secret against a stored `scrypt$…` hash in constant time; a malformed hash never matches. */
export async function verifyDeviceSecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash, extra] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined || extra !== undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length === 0) return false;
  try {
    const actual = await scrypt(secret, Buffer.from(salt, 'base64'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: MAX_SCRYPT_MEMORY_BYTES,
    });
    return timingSafeEqual(expected, actual);
  } catch {
    // Parameters scrypt refuses (not a power of two, over the memory bound): a hash we did not write.
    return false;
  }
}

/** A hash no secret matches, verified for unknown clients so that the answer takes as long as for known ones. */
export const DECOY_HASH = `scrypt$${SECRET_SCRYPT.N}$${SECRET_SCRYPT.r}$${SECRET_SCRYPT.p}$${'A'.repeat(24)}$${'A'.repeat(44)}`;

/** A new device secret and its stored credential (`id` a fresh ULID chosen by the caller). */
export async function newDeviceCredential(id: string, created: string): Promise<{ secret: string; credential: DeviceCredential }> {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { secret, credential: { id, secretHash: await hashDeviceSecret(secret), created } };
}

/**
 * How a client authenticated (RFC 6749 §2.3.1; the names are RFC 7591 §2's): with HTTP Basic, or with `client_id` and
 * `client_secret` in the form. A refusal of a Basic client is answered with a Basic challenge.
 */
export type ClientAuthenticationMethod = 'client_secret_basic' | 'client_secret_post';

/** A client credentials grant request: its form's grant and the client's credentials, however the client sent them. */
export interface ClientCredentialsRequest {
  /** `grant_type`. */
  grantType: string;
  /** The client id, if the client gave one. */
  clientId?: string;
  /** The client secret, if the client gave one. */
  clientSecret?: string;
  /** How the client sent its credentials. @default 'client_secret_post' */
  method?: ClientAuthenticationMethod;
  /** The address the request came from (clientSourceOf): failed attempts are counted per client id and source. */
  source?: string;
}

/** An issued device token. */
export interface IssuedDeviceToken {
  accessToken: string;
  /** Seconds. */
  expiresInSeconds: number;
}

/**
 * Checks that a token request asks for the client credentials grant, the one grant of a device: the first check of
 * a request, before its client's credentials are read.
 * @throws OAuthError unsupported_grant_type for any other grant.
 */
export function checkClientCredentialsGrant(grantType: string): void {
  if (grantType !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', `grant_type '${grantType}' is not supported; use client_credentials.`);
  }
}

/** What the client credentials grant uses: the devices, the signer, and the limits of secret checks. */
export interface DeviceTokenDependencies extends CheckLimits {
  devices: Pick<DeviceRepository, 'get'>;
  signer: DeviceTokenSigner;
  /** Checks a secret against a stored hash. @default verifyDeviceSecret */
  verify?: (secret: string, stored: string) => Promise<boolean>;
}

/** The client credentials grant's refusals before a hash: OAuth `temporarily_unavailable` (RFC 6749 JSON). */
export const CLIENT_CREDENTIALS_REFUSALS: CheckRefusals = {
  busy: (seconds) =>
    OAuthError.retryLater(
      'busy',
      `Too many client authentications are being checked right now; retry after ${seconds} second(s).`,
      seconds,
    ),
  blocked: (seconds) =>
    OAuthError.retryLater(
      'too-many-attempts',
      `Too many failed client authentications for this client from this address; retry after ${seconds} second(s), with the right secret.`,
      seconds,
    ),
};

/**
 * The client credentials grant: checks the device's client id and secret against its stored credential and signs a
 * token acting as that device (claims `sub` = device id, `companies` = [company], `scope` = DEVICE_SCOPE,
 * `client_id`, `cred` = the credential's id), valid `lifetimeSeconds`.
 *
 * Attempts are counted per client id and source (clientFailureKey, `request.source`) through limitedCheck: each is
 * reserved in the store before its hash, so a key gets at most `policy.limit` hashes per window across every
 * process, and once it has `policy.limit` attempts without a success in its window, its attempts are refused until
 * the window closes, whatever the secret, after one write and no read of the device. A success clears the key's
 * count. Hashes run through `gate`: a full gate refuses the attempt before any I/O.
 * @throws OAuthError unsupported_grant_type for a grant other than client_credentials; invalid_client (`viaBasic`
 *   when the client used HTTP Basic) for a missing, unknown or malformed client id, a missing or wrong secret, a
 *   device that is deleted or being deleted, or one without credentials: one answer for all, which tells nothing
 *   about which devices exist; temporarily_unavailable (OAuthError.retryLater) `too-many-attempts` for a key at its
 *   limit, retry after the seconds until its window closes, or `busy` when the gate admits no more attempts, retry
 *   after BUSY_RETRY_AFTER_SECONDS.
 * @throws ServiceUnavailableError when the store of attempts cannot be used: no secret is checked then.
 */
export async function issueDeviceToken(
  dependencies: DeviceTokenDependencies,
  request: ClientCredentialsRequest,
  lifetimeSeconds: number,
): Promise<IssuedDeviceToken> {
  checkClientCredentialsGrant(request.grantType);
  const { clientId, clientSecret } = request;
  const refused = new OAuthError(
    'invalid_client',
    'Client authentication failed: unknown client, wrong secret, or no credentials.',
    request.method === 'client_secret_basic',
  );
  // Bounds apply alike whichever way the client authenticated (form or HTTP Basic): a client id out of them names no
  // client, a secret out of them is wrong; both are a failed client authentication (RFC 6749 §5.2 invalid_client).
  const named = clientId === undefined || clientId.length > MAX_CLIENT_ID_LENGTH ? undefined : parseDeviceClientId(clientId);
  // No client id of the public syntax: refused at once, neither counted nor hashed (answering faster tells only what
  // the syntax already says).
  if (named === undefined) throw refused;
  const { verify = verifyDeviceSecret } = dependencies;
  const source = clientSourceOf(request.source);
  let credentialId: string | undefined;
  const authenticated = await limitedCheck(
    dependencies,
    { key: clientFailureKey(clientId as string, source), source },
    CLIENT_CREDENTIALS_REFUSALS,
    async (slot) => {
      const device = await dependencies.devices.get(named.company, named.deviceId);
      const credential = device === undefined || device.deleting === true ? undefined : device.credential;
      const usableSecret = clientSecret !== undefined && clientSecret.length <= MAX_CLIENT_SECRET_LENGTH ? clientSecret : undefined;
      // Verified whatever was found, so the answer takes as long for an unknown client as for a wrong secret.
      const matches = await slot(() => verify(usableSecret ?? '', credential?.secretHash ?? DECOY_HASH));
      if (credential === undefined || usableSecret === undefined || !matches) return false;
      credentialId = credential.id;
      return true;
    },
  );
  if (!authenticated || credentialId === undefined) throw refused;
  const accessToken = await dependencies.signer.sign(
    { sub: named.deviceId, companies: [named.company], scope: DEVICE_SCOPE, client_id: clientId as string, cred: credentialId },
    lifetimeSeconds,
  );
  return { accessToken, expiresInSeconds: lifetimeSeconds };
}
