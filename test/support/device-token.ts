/**
 * Device tokens for tests of the device-side routes, kept apart so that one place changes when the client
 * credentials grant is used instead: for now the credential is written straight into the device item (a secret hash
 * nobody can match) and the token signed with the local issuer's key (`<data>/auth/signing-key.json`), carrying the
 * claims the grant gives (`sub` = device id, `companies` = [company], `scope` = `device`, `client_id`, `cred`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { importJWK, type JWK, SignJWT } from 'jose';
import { ulid } from 'ulid';
import { SIGNING_KEY_FILE } from '../../functions/adapters/embedded/local-identity-provider.js';
import { deviceClientId } from '../../functions/core/devices.js';
import { DEVICE_SCOPE, DEVICE_TOKEN_CLAIMS } from '../../functions/core/principal.js';
import { LOCAL_AUDIENCE, LOCAL_TABLES } from '../../functions/local/runtime.js';

/** Where the runtime keeps its data and which issuer (its auth address) it trusts. */
export interface LocalIssuer {
  dataDirectory: string;
  /** `http://127.0.0.1:<port>` of the authentication address: the tokens' `iss`. */
  auth: string;
}

/**
 * Gives an existing device a new credential (replacing any earlier one) and returns a device token for it, valid
 * `lifetimeSeconds`.
 * @throws ConditionalCheckFailedException when the device does not exist.
 */
export async function deviceToken(
  client: DynamoDBDocumentClient,
  issuer: LocalIssuer,
  company: string,
  deviceId: string,
  lifetimeSeconds = 900,
): Promise<string> {
  const credentialId = ulid();
  await client.send(
    new UpdateCommand({
      TableName: LOCAL_TABLES.devices,
      Key: { company, deviceId },
      UpdateExpression: 'SET #credential = :credential',
      ConditionExpression: 'attribute_exists(deviceId)',
      ExpressionAttributeNames: { '#credential': 'credential' },
      ExpressionAttributeValues: {
        ':credential': { id: credentialId, secretHash: 'scrypt$test$not-a-secret', created: new Date().toISOString() },
      },
    }),
  );
  return signDeviceToken(issuer, company, deviceId, credentialId, lifetimeSeconds);
}

/** A device token for `credentialId`, signed with the local issuer's key as its token endpoint would. */
export async function signDeviceToken(
  issuer: LocalIssuer,
  company: string,
  deviceId: string,
  credentialId: string,
  lifetimeSeconds = 900,
): Promise<string> {
  // The issuer creates its key pair when first used: asking for its key set makes sure the file exists.
  const jwks = await fetch(`${issuer.auth}/.well-known/jwks.json`);
  if (jwks.status !== 200) throw new Error(`The local issuer's key set answered ${jwks.status}.`);
  const privateJwk = JSON.parse(await readFile(join(issuer.dataDirectory, 'auth', SIGNING_KEY_FILE), 'utf8')) as JWK;
  return new SignJWT({
    companies: [company],
    scope: DEVICE_SCOPE,
    [DEVICE_TOKEN_CLAIMS.clientId]: deviceClientId(company, deviceId),
    [DEVICE_TOKEN_CLAIMS.credentialId]: credentialId,
  })
    .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid as string, typ: 'JWT' })
    .setSubject(deviceId)
    .setIssuer(issuer.auth)
    .setAudience(LOCAL_AUDIENCE)
    .setIssuedAt()
    .setNotBefore('0s')
    .setExpirationTime(`${lifetimeSeconds}s`)
    .setJti(ulid())
    .sign(await importJWK(privateJwk, 'ES256'));
}
