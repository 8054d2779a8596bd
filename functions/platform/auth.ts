/**
 * Bearer tokens: their verification (verifyBearerToken: the local gateway's, and on AWS the bearer authorizer's) and
 * the handlers' reading of the caller from the authorizer context (principalFromJwt).
 */
import { createRemoteJWKSet, decodeJwt, type JWTPayload, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { ACCEPTED_ALGORITHMS } from '../contract/protocol.js';
import { isApiClientId } from '../core/clients/model.js';
import { ServiceUnavailableError, UnauthorizedError } from '../core/shared/errors.js';
import { DEVICE_SCOPE, DEVICE_TOKEN_CLAIMS, type Principal } from '../core/shared/principal.js';
import { type AuthConfig, authConfig } from './config.js';

/** How long a verified token is remembered at most, ms (as API Gateway's authorizer cache default, 300 s). */
export const VERIFIED_TOKEN_TTL_MS = 300_000;
/** How many verified tokens a process remembers (least recently used evicted first). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/**
 * Tokens already verified in this process (the exact compact JWT → its caller and claims), per trust list, each kept
 * until the earlier of its `exp` and VERIFIED_TOKEN_TTL_MS, so that a repeat request skips the ECDSA/RSA signature
 * check (~0.3 ms) but is never accepted past the token's expiry. Any other string, a tampered one included, is
 * verified in full. Each cache is built on first use (it preallocates its VERIFIED_TOKEN_CACHE_SIZE slots, ~1 ms): on
 * AWS only the bearer authorizer verifies tokens, never a route's function.
 */
const verifiedTokens = new WeakMap<readonly TrustedIssuer[], LRUCache<string, { verified: VerifiedToken; expiresAtMs: number }>>();
/** The cache of the tokens verified against `trust` (one per trust list: a token another list accepted proves nothing). */
function verifiedTokenCache(trust: readonly TrustedIssuer[]): LRUCache<string, { verified: VerifiedToken; expiresAtMs: number }> {
  let cache = verifiedTokens.get(trust);
  if (cache === undefined) {
    cache = new LRUCache({ max: VERIFIED_TOKEN_CACHE_SIZE, ttl: VERIFIED_TOKEN_TTL_MS });
    verifiedTokens.set(trust, cache);
  }
  return cache;
}

/**
 * What API Gateway's JWT authorizer hands a payload-v2 Lambda in `requestContext.authorizer.jwt`, and what the local
 * gateway hands it in the same place: the verified token's claims, and its scopes.
 */
export interface JwtAuthorizerContext {
  /**
   * Every claim of the token. API Gateway gives each as a string (see flattenClaims: `exp` as `"1767225600"`, an array
   * as `"[acme globex]"`); a real array or number is accepted too.
   */
  claims: Readonly<Record<string, string | number | boolean | readonly string[]>>;
  /** The token's `scope` claim, split, on a route with authorization scopes (every route here that takes a token); else null. */
  scopes: readonly string[] | null;
}

/** A verified bearer token: the caller, and the authorizer context API Gateway would give the function for it. */
export interface VerifiedToken {
  principal: Principal;
  jwt: JwtAuthorizerContext;
}

/**
 * Flattens verified JWT claims the way API Gateway's HTTP API JWT authorizer does for a payload-v2 integration:
 * strings as they are, numbers and booleans as text, an array as its items between brackets separated by one space
 * (`["acme","globex"]` → `"[acme globex]"`), an object as JSON text; null claims are left out.
 */
export function flattenClaims(payload: JWTPayload): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const [name, value] of Object.entries(payload)) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'string') claims[name] = value;
    else if (Array.isArray(value))
      claims[name] = `[${value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join(' ')}]`;
    else claims[name] = typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return claims;
}

/**
 * The authorizer context of a verified token's claims on a route with authorization scopes, as API Gateway builds it:
 * the claims flattened (flattenClaims) and the `scope` claim split on spaces. Frozen.
 */
export function jwtAuthorizerContext(payload: JWTPayload): JwtAuthorizerContext {
  const scope = typeof payload.scope === 'string' ? payload.scope : '';
  return Object.freeze({
    claims: Object.freeze(flattenClaims(payload)),
    scopes: Object.freeze(scope.split(' ').filter((item) => item !== '')),
  });
}

/**
 * Reads a list-valued claim in any of the forms it reaches a function in: a real array of strings, the bracketed
 * form API Gateway flattens arrays to (`[a b]`, also `[a, b]`), a JSON array in a string (`["a","b"]`), or a
 * space- or comma-separated string. Undefined when the claim is absent or of another type. Items therefore never
 * contain white space, commas, brackets or quotes (company ids and scopes do not).
 */
function listClaim(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.every((item) => typeof item === 'string') ? [...(value as string[])] : undefined;
  if (typeof value !== 'string') return undefined;
  let text = value.trim();
  if (text.startsWith('[') && text.endsWith(']')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed as string[];
    } catch {
      // Not JSON: API Gateway's `[a b]`.
    }
    text = text.slice(1, -1);
  }
  return text.split(/[\s,]+/).filter((item) => item !== '');
}

/**
 * The caller of a request whose token a JWT authorizer verified (API Gateway on AWS, the local gateway locally),
 * from `event.requestContext.authorizer.jwt`: `sub`, the `username` claim (else `sub`), the `companies` claim (in any
 * form listClaim reads) and the scopes (`jwt.scopes` and the `scope` claim, space-separated). The signature, issuer, audience and expiry were
 * checked by the authorizer; this only reads.
 * A token holding DEVICE_SCOPE is a device token: its principal carries `device` (company, device id = `sub`,
 * credential id = `cred` claim) and no other scope.
 * @throws UnauthorizedError (401) when `sub` or a `companies` claim is missing, or a device token lacks its one
 *   company or its `cred` claim.
 */
export function principalFromJwt(jwt: { claims?: Readonly<Record<string, unknown>> | null; scopes?: readonly string[] | null }): Principal {
  const claims = jwt.claims ?? {};
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '') throw new UnauthorizedError('The token has no "sub" claim.');
  const companies = listClaim(claims.companies);
  if (companies === undefined) throw new UnauthorizedError('The token has no valid "companies" claim.');
  const scope = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  const scopes = new Set([...(jwt.scopes ?? []), ...scope].filter((item) => item !== ''));
  if (!scopes.has(DEVICE_SCOPE)) {
    // Cognito's `sub` is a UUID; its access tokens name the user in `username` (the local issuer's carry both).
    const username = typeof claims.username === 'string' && claims.username !== '' ? claims.username : subject;
    const principal = { subject, username, companies: Object.freeze([...new Set(companies)]), scopes };
    // An API client's token: `sub` and `client_id` are its id (a Cognito user token's `client_id` is the app client's).
    if (claims.client_id === subject && isApiClientId(subject)) {
      const issuedAt = Number(claims.iat);
      if (companies.length !== 1 || !Number.isFinite(issuedAt)) {
        throw new UnauthorizedError('An API client\'s token must name one company and when it was issued ("iat").');
      }
      const apiClient = Object.freeze({ clientId: subject, issuedAt: new Date(issuedAt * 1000).toISOString() });
      return Object.freeze({ ...principal, apiClient });
    }
    return Object.freeze(principal);
  }
  // A device token acts as one device of one company, with the device scope only.
  const credentialId = claims[DEVICE_TOKEN_CLAIMS.credentialId];
  const [company] = companies;
  if (companies.length !== 1 || company === undefined || typeof credentialId !== 'string' || credentialId === '') {
    throw new UnauthorizedError('The device token must name one company and its credential ("cred" claim).');
  }
  return Object.freeze({
    subject,
    companies: Object.freeze([company]),
    scopes: new Set([DEVICE_SCOPE]),
    device: Object.freeze({ company, deviceId: subject, credentialId }),
  });
}

/** Why a bearer token was refused: the `reason` of the TokenFailures metric (observability.ts). */
export type TokenFailureReason = 'missing' | 'malformed' | 'expired' | 'invalid';

/** The refusals verifyBearerToken threw, with their reason (weakly held: collected with their requests). */
const refusals = new WeakMap<object, TokenFailureReason>();

function refused(reason: TokenFailureReason, detail: string, bearerError?: 'invalid_request' | null): UnauthorizedError {
  const error = new UnauthorizedError(detail, bearerError);
  refusals.set(error, reason);
  return error;
}

/** The reason verifyBearerToken refused a token with `error`; undefined for any other error (e.g. a wrong password). */
export function tokenFailureReason(error: unknown): TokenFailureReason | undefined {
  return typeof error === 'object' && error !== null ? refusals.get(error) : undefined;
}

/**
 * An issuer whose tokens a verifier accepts: its `iss`, the audience its tokens must be for, and its public keys.
 * The audience rule is API Gateway's JWT authorizer's: a token with an `aud` claim must name `audience` in it; a token
 * without one (a Cognito access token) must carry it as `client_id`.
 */
export interface TrustedIssuer {
  /** The exact `iss`. */
  issuer: string;
  /** The `aud` (or, for a token without `aud`, the `client_id`) required. */
  audience: string;
  /** The issuer's public keys (a remote JWKS, or a local one). */
  keys: JWTVerifyGetKey;
  /** Claims its tokens must carry with exactly these values (the pool's: `token_use` `access`, not its ID tokens). */
  requiredClaims?: Readonly<Record<string, string>>;
}

let localTrust: readonly TrustedIssuer[] | undefined;

/**
 * The issuer the local gateway trusts (JWT_ISSUER, JWT_AUDIENCE, its keys fetched from JWKS_URL and kept 10 minutes),
 * built once. @throws EnvironmentError naming each bad variable of the `tokenVerification` group.
 */
export function configuredTrust(): readonly TrustedIssuer[] {
  if (localTrust === undefined) {
    const config: AuthConfig = authConfig();
    localTrust = Object.freeze([{ issuer: config.issuer, audience: config.audience, keys: remoteKeys(config.jwksUrl) }]);
  }
  return localTrust;
}

/** An issuer's JWKS at `url`, fetched on first use and kept 10 minutes (an unknown `kid` refetches after 30 s). */
export function remoteKeys(url: string): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 600_000 });
}

/** The `iss` a compact JWT claims, read without verifying anything (to pick the issuer's keys); undefined if unreadable. */
function claimedIssuer(token: string): string | undefined {
  try {
    const { iss } = decodeJwt(token);
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `payload` is for `audience` (TrustedIssuer's rule: `aud` when the token has one, else `client_id`). */
function isForAudience(payload: JWTPayload, audience: string): boolean {
  if (payload.aud === undefined) return payload.client_id === audience;
  return Array.isArray(payload.aud) ? payload.aud.includes(audience) : payload.aud === audience;
}

/**
 * Verifies a bearer token with `jose` against the keys of the issuer it names among `trust` (issuer, audience,
 * expiry, nbf, asymmetric algorithm), as API Gateway's JWT authorizer does for one issuer: the local gateway calls it
 * before invoking a route's handler (with configuredTrust, the local issuer), the AWS bearer authorizer with the
 * Cognito pool and the device issuer. Returns the caller and the authorizer context to hand the handler (claims
 * flattened as API Gateway does, the token's scopes). A token verified before in this process is answered from a
 * cache until its expiry (at most VERIFIED_TOKEN_TTL_MS); the returned object is shared and must not be modified.
 * @param authorization the `Authorization` header value.
 * @param trust the issuers accepted (a process uses one list: the cache does not tell lists apart).
 * @throws UnauthorizedError (401, `WWW-Authenticate: Bearer`) when the token is missing, malformed, expired, from an
 *   issuer not in `trust` or for another audience, badly signed, or has no `companies` claim.
 * @throws ServiceUnavailableError (503) when the issuer's keys cannot be fetched.
 */
export async function verifyBearerToken(
  authorization: string | undefined,
  trust: readonly TrustedIssuer[] = configuredTrust(),
): Promise<VerifiedToken> {
  if (authorization === undefined || authorization === '') {
    throw refused('missing', 'An Authorization: Bearer <token> header is required.', null);
  }
  const match = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i.exec(authorization.trim());
  if (match === null) throw refused('malformed', 'The Authorization header must be "Bearer <JWT>".', 'invalid_request');
  const token = match[1] as string;
  const remembered = verifiedTokenCache(trust).get(token);
  // The cache's TTL runs on a monotonic clock that may lag after a pause (a frozen Lambda); `exp` is wall-clock time.
  if (remembered !== undefined && Date.now() < remembered.expiresAtMs) return remembered.verified;
  const claimed = claimedIssuer(token);
  const trusted = trust.find((candidate) => candidate.issuer === claimed);
  if (trusted === undefined) throw refused('invalid', 'The token is not valid: its issuer ("iss") is not trusted here.');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, trusted.keys, {
      issuer: trusted.issuer,
      algorithms: ACCEPTED_ALGORITHMS,
      requiredClaims: ['sub', 'exp'],
    }));
  } catch (error) {
    // The key set unreachable, answering other than 200 (a generic JOSEError) or not a key set: the issuer's outage,
    // not a bad token.
    if (
      error instanceof joseErrors.JWKSTimeout ||
      error instanceof joseErrors.JWKSInvalid ||
      (error instanceof joseErrors.JOSEError && error.code === 'ERR_JOSE_GENERIC') ||
      (error instanceof TypeError && /fetch/i.test(error.message))
    ) {
      throw new ServiceUnavailableError('The token issuer cannot be reached to verify the token; retry shortly.');
    }
    if (error instanceof joseErrors.JWTExpired) throw refused('expired', 'The token has expired; request a new one.');
    if (error instanceof joseErrors.JOSEError) throw refused('invalid', `The token is not valid: ${error.message}.`);
    throw error;
  }
  if (!isForAudience(payload, trusted.audience)) throw refused('invalid', 'The token is not valid: it is for another audience ("aud").');
  for (const [claim, value] of Object.entries(trusted.requiredClaims ?? {})) {
    if (payload[claim] !== value) throw refused('invalid', `The token is not valid: its "${claim}" claim is not "${value}".`);
  }
  const jwt = jwtAuthorizerContext(payload);
  const verified: VerifiedToken = Object.freeze({ principal: principalFromJwt(jwt), jwt });
  const expiresAtMs = (payload.exp as number) * 1000;
  const untilExpiryMs = expiresAtMs - Date.now();
  if (untilExpiryMs > 0)
    verifiedTokenCache(trust).set(token, { verified, expiresAtMs }, { ttl: Math.min(VERIFIED_TOKEN_TTL_MS, untilExpiryMs) });
  return verified;
}
