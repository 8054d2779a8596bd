/**
 * Device credentials and the OAuth 2.0 client credentials grant (RFC 6749 §4.4): a device authenticates with its
 * client id (`{company}~{deviceId}`) and secret, in the form body or with HTTP Basic (§2.3.1), and gets a short-lived
 * token that acts only as that device (DEVICE_SCOPE).
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
const DECOY_HASH = `scrypt$${SECRET_SCRYPT.N}$${SECRET_SCRYPT.r}$${SECRET_SCRYPT.p}$${'A'.repeat(24)}$${'A'.repeat(44)}`;

/** A new device secret and its stored credential (`id` a fresh ULID chosen by the caller). */
export async function newDeviceCredential(id: string, created: string): Promise<{ secret: string; credential: DeviceCredential }> {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { secret, credential: { id, secretHash: await hashDeviceSecret(secret), created } };
}

/** A token request as the token endpoint received it (form members, and the Authorization header if any). */
export interface ClientCredentialsRequest {
  /** `grant_type`. */
  grantType: string;
  /** `client_id` of the form, if given. */
  clientId?: string;
  /** `client_secret` of the form, if given. */
  clientSecret?: string;
  /** The `Authorization` header, if any (`Basic base64(urlencode(id) ":" urlencode(secret))`). */
  authorization?: string;
  /** The peer's address (`requestContext.http.sourceIp`): failed attempts are counted per client id and source. */
  source?: string;
}

/** An issued device token. */
export interface IssuedDeviceToken {
  accessToken: string;
  /** Seconds. */
  expiresInSeconds: number;
}

/** Decodes one half of a Basic credential: `application/x-www-form-urlencoded` (RFC 6749 §2.3.1), `+` a space. */
function formDecoded(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '));
}

/**
 * The client id and secret of a request, from HTTP Basic or the form (never both: RFC 6749 §2.3.1 allows one method).
 * @throws OAuthError invalid_request when both are used, or the Basic credential is not `base64(id:secret)`.
 */
export function clientCredentialsOf(request: ClientCredentialsRequest): { clientId?: string; clientSecret?: string; viaBasic: boolean } {
  const basic = /^basic\s+(\S+)\s*$/i.exec(request.authorization ?? '');
  if (basic === null) return { clientId: request.clientId, clientSecret: request.clientSecret, viaBasic: false };
  if (request.clientSecret !== undefined) {
    throw new OAuthError('invalid_request', 'Authenticate the client once: with HTTP Basic or with client_secret in the body, not both.');
  }
  const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  let clientId: string;
  let clientSecret: string;
  try {
    if (colon < 0) throw new URIError('no colon');
    clientId = formDecoded(decoded.slice(0, colon));
    clientSecret = formDecoded(decoded.slice(colon + 1));
  } catch {
    throw new OAuthError('invalid_request', 'The Basic credential must be base64 of "<client_id>:<client_secret>", each form-urlencoded.');
  }
  if (request.clientId !== undefined && request.clientId !== clientId) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the client of the Authorization header.');
  }
  return { clientId, clientSecret, viaBasic: true };
}

/** What the client credentials grant uses: the devices, the signer, and the limits of secret checks. */
export interface DeviceTokenDependencies extends CheckLimits {
  devices: Pick<DeviceRepository, 'get'>;
  signer: DeviceTokenSigner;
  /** Checks a secret against a stored hash. @default verifyDeviceSecret */
  verify?: (secret: string, stored: string) => Promise<boolean>;
}

/** The client credentials grant's refusals before a hash: OAuth `temporarily_unavailable` (RFC 6749 JSON). */
const DEVICE_REFUSALS: CheckRefusals = {
  busy: (seconds) =>
    OAuthError.retryLater(
      'busy',
      `Too many client authentications are being checked right now; retry after ${seconds} second(s) (Retry-After).`,
      seconds,
    ),
  blocked: (seconds) =>
    OAuthError.retryLater(
      'too-many-attempts',
      `Too many failed client authentications for this client from this address; retry after ${seconds} second(s) (Retry-After), with the right secret.`,
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
 * process, and once it has `policy.limit` attempts without a success in its window, its attempts answer 429 until
 * the window closes, whatever the secret, after one write and no read of the device. A success clears the key's
 * count. Hashes run through `gate`: a full gate answers 503 before any I/O.
 * @throws OAuthError unsupported_grant_type (400) for a grant other than client_credentials; invalid_request (400)
 *   for a request using two client authentication methods or a malformed Basic credential; invalid_client (401)
 *   for a missing, unknown or malformed client id, a missing or wrong secret, a device that is deleted or being
 *   deleted, or one without credentials: one answer for all, which tells nothing about which devices exist;
 *   temporarily_unavailable 429 with Retry-After (seconds until the key's window closes) for a key at its limit, or
 *   503 with Retry-After BUSY_RETRY_AFTER_SECONDS when the gate admits no more attempts.
 * @throws ServiceUnavailableError when the store of attempts cannot be used: no secret is checked then.
 */
export async function issueDeviceToken(
  dependencies: DeviceTokenDependencies,
  request: ClientCredentialsRequest,
  lifetimeSeconds: number,
): Promise<IssuedDeviceToken> {
  if (request.grantType !== 'client_credentials') {
    throw new OAuthError('unsupported_grant_type', `grant_type '${request.grantType}' is not supported; use client_credentials.`);
  }
  const { clientId, clientSecret, viaBasic } = clientCredentialsOf(request);
  const refused = new OAuthError(
    'invalid_client',
    'Client authentication failed: unknown client, wrong secret, or no credentials.',
    viaBasic,
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
    DEVICE_REFUSALS,
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
