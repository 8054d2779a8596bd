import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { ServiceUnavailableError, UnauthorizedError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import { type AuthConfig, authConfig } from './config.js';

/** Asymmetric algorithms accepted (docs/contract.md): `alg: none` and HMAC are always rejected. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

let cached: { config: AuthConfig; keys: JWTVerifyGetKey } | undefined;

/** How long a verified token is remembered at most, ms (as API Gateway's authorizer cache default, 300 s). */
export const VERIFIED_TOKEN_TTL_MS = 300_000;
/** How many verified tokens a process remembers (least recently used evicted first). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/**
 * Tokens already verified in this process (the exact compact JWT → its caller), each kept until the earlier of its
 * `exp` and VERIFIED_TOKEN_TTL_MS, so that a repeat request skips the ECDSA/RSA signature check (~0.3 ms) but is
 * never accepted past the token's expiry. Any other string, a tampered one included, is verified in full.
 */
const verifiedTokens = new LRUCache<string, { principal: Principal; expiresAtMs: number }>({ max: VERIFIED_TOKEN_CACHE_SIZE, ttl: VERIFIED_TOKEN_TTL_MS });

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

function verifierSettings(): { config: AuthConfig; keys: JWTVerifyGetKey } {
  if (cached === undefined) {
    const config = authConfig();
    cached = { config, keys: createRemoteJWKSet(new URL(config.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 600_000 }) };
  }
  return cached;
}

/**
 * Verifies a bearer token with `jose` against the issuer's JWKS (issuer, audience, expiry, nbf, asymmetric algorithm)
 * and returns the caller. A token verified before in this process is answered from a cache until its expiry
 * (at most VERIFIED_TOKEN_TTL_MS); the returned Principal is shared and must not be modified.
 * @param authorization the `Authorization` header value.
 * @throws UnauthorizedError (401, `WWW-Authenticate: Bearer`) when the token is missing, malformed, expired or untrusted.
 * @throws ServiceUnavailableError (503) when the issuer's JWKS cannot be fetched.
 */
export async function verifyBearerToken(authorization: string | undefined): Promise<Principal> {
  if (authorization === undefined || authorization === '') {
    throw refused('missing', 'An Authorization: Bearer <token> header is required.', null);
  }
  const match = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i.exec(authorization.trim());
  if (match === null) throw refused('malformed', 'The Authorization header must be "Bearer <JWT>".', 'invalid_request');
  const token = match[1] as string;
  const remembered = verifiedTokens.get(token);
  // The cache's TTL runs on a monotonic clock that may lag after a pause (a frozen Lambda); `exp` is wall-clock time.
  if (remembered !== undefined && Date.now() < remembered.expiresAtMs) return remembered.principal;
  const { config, keys } = verifierSettings();
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      issuer: config.issuer,
      audience: config.audience,
      algorithms: ACCEPTED_ALGORITHMS,
      requiredClaims: ['sub', 'exp'],
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWKSTimeout || (error instanceof TypeError && /fetch/i.test(error.message))) {
      throw new ServiceUnavailableError('The token issuer cannot be reached to verify the token; retry shortly.');
    }
    if (error instanceof joseErrors.JWTExpired) throw refused('expired', 'The token has expired; request a new one.');
    if (error instanceof joseErrors.JOSEError) throw refused('invalid', `The token is not valid: ${error.message}.`);
    throw error;
  }
  const companies = payload.companies;
  if (!Array.isArray(companies) || !companies.every((company) => typeof company === 'string')) {
    throw refused('invalid', 'The token has no valid "companies" claim.');
  }
  const scope = typeof payload.scope === 'string' ? payload.scope : '';
  const principal: Principal = Object.freeze({
    subject: payload.sub as string,
    companies: Object.freeze([...companies]),
    scopes: new Set(scope.split(' ').filter((item) => item !== '')),
  });
  const expiresAtMs = (payload.exp as number) * 1000;
  const untilExpiryMs = expiresAtMs - Date.now();
  if (untilExpiryMs > 0) verifiedTokens.set(token, { principal, expiresAtMs }, { ttl: Math.min(VERIFIED_TOKEN_TTL_MS, untilExpiryMs) });
  return principal;
}

/** Reads the bearer token of an API Gateway event and verifies it (see verifyBearerToken). */
export function authenticate(event: APIGatewayProxyEventV2): Promise<Principal> {
  return verifyBearerToken(event.headers?.authorization ?? event.headers?.Authorization);
}
