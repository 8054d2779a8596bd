/**
 * A device token for tests of the device endpoints, made as the client credentials grant makes one: a fresh
 * credential stored on the device (through the device repository, so `activeDevice` accepts it), then a JWT signed
 * with the local issuer's key (`<data>/auth/signing-key.json`) carrying the device claims. One function, so that it
 * can be switched to `POST {auth}/token` with `grant_type=client_credentials` in one place.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importJWK, type JWK, SignJWT } from 'jose';
import { ulid } from 'ulid';
import { createDocumentClient } from '../../functions/adapters/aws/clients.js';
import { DynamoDbDeviceRepository } from '../../functions/adapters/aws/dynamodb-device-repository.js';
import { hashPassword, SIGNING_KEY_FILE } from '../../functions/adapters/embedded/local-identity-provider.js';
import { deviceClientId, type StoredDevice } from '../../functions/core/devices/model.js';
import { DEVICE_SCOPE, DEVICE_TOKEN_CLAIMS } from '../../functions/core/shared/principal.js';
import { LOCAL_AUDIENCE, LOCAL_TABLES } from '../../functions/local/runtime.js';

/** Where the local runtime keeps its state: its data folder, its DynamoDB Local, its token issuer's address. */
export interface LocalIssuer {
  dataDirectory: string;
  dynamoDbEndpoint: string;
  /** `iss` of its tokens: the auth address, e.g. `http://127.0.0.1:3002`. */
  auth: string;
}

/**
 * Gives `deviceId` of `company` a new credential (replacing any earlier one, as the credentials route does) and
 * returns a token for it, valid `lifetimeSeconds` (at most 900, like the grant's).
 * @throws Error when the device does not exist.
 */
export async function deviceToken(
  issuer: LocalIssuer,
  company: string,
  deviceId: string,
  lifetimeSeconds = 900,
): Promise<{ token: string; clientId: string; credentialId: string }> {
  const client = createDocumentClient(issuer.dynamoDbEndpoint);
  const credentialId = ulid();
  try {
    const devices = new DynamoDbDeviceRepository(client, LOCAL_TABLES);
    const device = await devices.get(company, deviceId);
    if (device === undefined) throw new Error(`No device '${deviceId}' in '${company}'.`);
    const stored: StoredDevice = {
      ...device,
      credential: { id: credentialId, secretHash: await hashPassword(ulid()), created: new Date().toISOString() },
    };
    await devices.put([stored]);
  } finally {
    client.destroy();
  }
  // The issuer creates its key on first use: asking for its key set first makes sure the file exists (a token asked
  // for at the same moment, or none yet, would otherwise leave this read racing the key's creation).
  const jwks = await fetch(`${issuer.auth}/.well-known/jwks.json`);
  if (jwks.status !== 200) throw new Error(`The local issuer's key set answered ${jwks.status}.`);
  await jwks.arrayBuffer();
  const jwk = JSON.parse(await readFile(join(issuer.dataDirectory, 'auth', SIGNING_KEY_FILE), 'utf8')) as JWK;
  const clientId = deviceClientId(company, deviceId);
  const token = await new SignJWT({
    companies: [company],
    scope: DEVICE_SCOPE,
    [DEVICE_TOKEN_CLAIMS.clientId]: clientId,
    [DEVICE_TOKEN_CLAIMS.credentialId]: credentialId,
  })
    .setProtectedHeader({ alg: 'ES256', kid: jwk.kid as string, typ: 'JWT' })
    .setSubject(deviceId)
    .setIssuer(issuer.auth)
    .setAudience(LOCAL_AUDIENCE)
    .setIssuedAt()
    .setNotBefore('0s')
    .setExpirationTime(`${Math.min(lifetimeSeconds, 900)}s`)
    .setJti(ulid())
    .sign(await importJWK(jwk, 'ES256'));
  return { token, clientId, credentialId };
}
