/**
 * The OAuth 2.0 client credentials grant (RFC 6749 §4.4) of an API client: its id and secret (or the previous secret
 * during a rotation's overlap) get a short-lived token acting for its one company with its role's scopes, or fewer
 * when the request's `scope` asks for fewer (never more: `invalid_scope`).
 */
import { type CheckLimits, clientFailureKey, clientSourceOf, limitedCheck } from '../access/client-failures.js';
import { ROLES } from '../access/roles.js';
import {
  CLIENT_CREDENTIALS_REFUSALS,
  type ClientCredentialsRequest,
  checkClientCredentialsGrant,
  DECOY_HASH,
  MAX_CLIENT_SECRET_LENGTH,
  verifyDeviceSecret,
} from '../devices/tokens.js';
import { OAuthError } from '../shared/errors.js';
import { type ClientTokenClaims, clientActor, isApiClientId, LAST_USED_WRITE_INTERVAL_MS, type StoredApiClient } from './model.js';
import type { ApiClientStore } from './ports.js';

export type { ClientTokenClaims } from './model.js';

/** Signs API clients' tokens with the issuer's key (the local issuer's locally, the device issuer's KMS key on AWS). */
export interface ClientTokenSigner {
  /** A compact JWT of `claims` (with iss, aud, iat, nbf, exp, jti) valid `lifetimeSeconds`. */
  sign(claims: ClientTokenClaims, lifetimeSeconds: number): Promise<string>;
}

/** What issueClientToken needs: the clients, the signer, the limits of secret checks, a clock. */
export interface ClientTokenDependencies extends CheckLimits {
  clients: Pick<ApiClientStore, 'get' | 'touch'>;
  signer: ClientTokenSigner;
  /** Checks a secret against a stored hash. @default verifyDeviceSecret */
  verify?: (secret: string, stored: string) => Promise<boolean>;
}

/** A client credentials request of an API client: the device's, with the `scope` it asks for. */
export interface ClientTokenRequest extends ClientCredentialsRequest {
  /** Space-separated scopes (RFC 6749 §3.3), each one of the role's; absent or empty: all of them. */
  scope?: string;
}

/** An issued client token: the JWT, its lifetime (seconds) and its scopes (RFC 6749 §5.1 `scope`). */
export interface IssuedClientToken {
  accessToken: string;
  expiresInSeconds: number;
  scope: string;
}

/**
 * The scopes a token of `client` gets for the `requested` scope text: the role's, or the requested ones when each is
 * the role's. @throws OAuthError invalid_scope naming the scopes the role does not hold.
 */
export function grantedScopes(client: Pick<StoredApiClient, 'role'>, requested: string | undefined): string {
  const held: readonly string[] = ROLES[client.role];
  const asked = (requested ?? '').split(' ').filter((scope) => scope !== '');
  if (asked.length === 0) return held.join(' ');
  const beyond = asked.filter((scope) => !held.includes(scope));
  if (beyond.length > 0) {
    throw new OAuthError(
      'invalid_scope',
      `The client's role '${client.role}' does not hold ${beyond.map((scope) => `'${scope}'`).join(', ')}; ask for some of: ${held.join(' ')} (or leave scope out for all).`,
    );
  }
  return held.filter((scope) => asked.includes(scope)).join(' ');
}

/**
 * Whether `secret` is the client's secret, or its previous one before `previousSecretExpiresAt`. Two hashes whatever
 * is stored (the decoy's where there is no client or no previous secret), so that the time taken tells nothing.
 */
async function secretMatches(
  verify: (secret: string, stored: string) => Promise<boolean>,
  client: StoredApiClient | undefined,
  secret: string,
  now: Date,
): Promise<boolean> {
  const previousValid =
    client?.previousSecretHash !== undefined &&
    client.previousSecretExpiresAt !== undefined &&
    Date.parse(client.previousSecretExpiresAt) > now.getTime();
  const [current, previous] = await Promise.all([
    verify(secret, client?.secretHash ?? DECOY_HASH),
    verify(secret, previousValid ? (client.previousSecretHash as string) : DECOY_HASH),
  ]);
  return client !== undefined && (current || (previousValid && previous));
}

/**
 * The client credentials grant of an API client: checks its id and secret (the current one, or the previous one until
 * `previousSecretExpiresAt`), within the limits of secret checks (counted per client id and source, as a device's),
 * and signs a token for its company with grantedScopes, valid `lifetimeSeconds`; the client's `lastUsedAt` is set
 * (at most one write a minute).
 * @throws OAuthError unsupported_grant_type for another grant; invalid_client (`viaBasic` with HTTP Basic) for an
 *   unknown client, a wrong or expired secret, or a disabled client, one answer for all; invalid_scope for a scope the
 *   role does not hold (after the client authenticated); temporarily_unavailable as the device grant.
 * @throws ServiceUnavailableError when the store of attempts cannot be used.
 */
export async function issueClientToken(
  dependencies: ClientTokenDependencies,
  request: ClientTokenRequest,
  lifetimeSeconds: number,
): Promise<IssuedClientToken> {
  checkClientCredentialsGrant(request.grantType);
  const { clientId, clientSecret } = request;
  const refused = new OAuthError(
    'invalid_client',
    'Client authentication failed: unknown or disabled client, or a wrong or expired secret.',
    request.method === 'client_secret_basic',
  );
  if (clientId === undefined || !isApiClientId(clientId)) throw refused;
  const { verify = verifyDeviceSecret } = dependencies;
  const now = new Date(dependencies.now?.() ?? Date.now());
  const source = clientSourceOf(request.source);
  let client: StoredApiClient | undefined;
  const authenticated = await limitedCheck(
    dependencies,
    { key: clientFailureKey(clientId, source), source },
    CLIENT_CREDENTIALS_REFUSALS,
    async (slot) => {
      const found = await dependencies.clients.get(clientId);
      const secret = clientSecret !== undefined && clientSecret.length <= MAX_CLIENT_SECRET_LENGTH ? clientSecret : '';
      const matches = await slot(() => secretMatches(verify, found, secret, now));
      if (!matches || found === undefined || !found.enabled || clientSecret === undefined) return false;
      client = found;
      return true;
    },
  );
  if (!authenticated || client === undefined) throw refused;
  const scope = grantedScopes(client, request.scope);
  const claims: ClientTokenClaims = {
    sub: clientId,
    username: clientActor(clientId),
    companies: [client.company],
    scope,
    client_id: clientId,
  };
  const accessToken = await dependencies.signer.sign(claims, lifetimeSeconds);
  const since = now.getTime() - LAST_USED_WRITE_INTERVAL_MS;
  // At most one write a minute (the read client's lastUsedAt says whether one is due), and never a refused token.
  if (client.lastUsedAt === undefined || Date.parse(client.lastUsedAt) < since) {
    await dependencies.clients.touch(clientId, now.toISOString(), new Date(since).toISOString()).catch(() => undefined);
  }
  return { accessToken, expiresInSeconds: lifetimeSeconds, scope };
}
