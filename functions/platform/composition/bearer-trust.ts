/**
 * The issuers the AWS bearer authorizer trusts, in the composition root: the Cognito user pool (users' access tokens)
 * and the device issuer (devices' and API clients' tokens, signed by its KMS key).
 */
import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import { remoteKeys, type TrustedIssuer } from '../auth.js';
import { authConfig, deviceIssuerConfig } from '../config.js';
import { awsDeviceIssuer } from './identity.js';

let trust: readonly TrustedIssuer[] | undefined;

/**
 * The two issuers, built once: the pool (JWT_ISSUER, its app client JWT_AUDIENCE as `client_id`, `token_use`
 * `access`, its keys from JWKS_URL, kept 10 minutes) and the device issuer (DEVICE_TOKEN_ISSUER, DEVICE_TOKEN_AUDIENCE as `aud`, its public key read from KMS
 * with GetPublicKey once per cold start, the call failing over to the next request when KMS throttles).
 * @throws EnvironmentError naming each missing or malformed variable of the `tokenVerification` or `deviceIssuer` group.
 */
export function awsBearerTrust(): readonly TrustedIssuer[] {
  if (trust === undefined) {
    const users = authConfig();
    const devices = deviceIssuerConfig();
    let local: Promise<JWTVerifyGetKey> | undefined;
    const deviceKeys: JWTVerifyGetKey = async (header, token) => {
      if (local === undefined) {
        local = awsDeviceIssuer().then(async (issuer) => createLocalJWKSet(await issuer.keys.jwks()));
        local.catch(() => {
          local = undefined;
        });
      }
      return (await local)(header, token);
    };
    trust = Object.freeze([
      // Access tokens only: the pool's ID tokens name the app client as `aud` too.
      { issuer: users.issuer, audience: users.audience, keys: remoteKeys(users.jwksUrl), requiredClaims: { token_use: 'access' } },
      { issuer: devices.issuer, audience: devices.audience, keys: deviceKeys },
    ]);
  }
  return trust;
}
