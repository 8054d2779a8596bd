/**
 * The device token issuer's public documents on AWS, under the authentication address: its OpenID discovery document
 * and its key set. Device tokens are signed by a KMS key there (functions/adapters/aws/kms-device-token-signer.ts) for
 * the issuer `{auth_url}/device`, and API Gateway's JWT authorizer of the device routes finds the key set through
 * `{issuer}/.well-known/openid-configuration`. Not in ROUTES: the local runtime signs device tokens with its own issuer
 * (`{auth_url}`, whose key set is `{auth_url}/.well-known/jwks.json`), so these routes exist on AWS only
 * (AWS_ROUTES of functions/contract/routes.ts adds DEVICE_ISSUER_ROUTES to the auth API).
 */
import * as z from 'zod';
import { IgnoredQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import { JsonWebKeySet } from '../schemas/auth.js';
import { COMMON_PROBLEMS, HEADERS, problem } from '../schemas/responses.js';

/** The device issuer's path under the authentication address: `iss` of device tokens on AWS is `{auth_url}/device`. */
export const DEVICE_ISSUER_PATH = '/device';

/** The one function serving both documents (it reads the device token key's public key, nothing else). */
export const DEVICE_ISSUER_ENTRY = 'functions/handlers/device-issuer.ts';

/** The discovery document: what a JWT verifier needs of it (OpenID Connect Discovery 1.0 §3). */
export const OpenIdConfiguration = z
  .object({
    issuer: z.url().describe('Exactly the `iss` of device tokens.'),
    jwks_uri: z.url().describe("The issuer's key set."),
    token_endpoint: z.url().describe('Where devices get tokens (client credentials grant).'),
  })
  .loose()
  .meta({ id: 'OpenIdConfiguration', description: 'OpenID Provider metadata of the device token issuer.' });

/** What the two routes share: public, one function, no storage. */
const common = {
  api: 'auth',
  method: 'GET',
  tags: ['Authentication'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false, memorySize: 256, deviceKey: 'publicKey' },
  entry: DEVICE_ISSUER_ENTRY,
  onAws: { kind: 'entry' },
} as const;

/** GET /device/.well-known/openid-configuration (AWS only) */
export const deviceIssuerDiscovery = defineRoute({
  ...common,
  id: 'DeviceIssuerDiscovery',
  path: `${DEVICE_ISSUER_PATH}/.well-known/openid-configuration`,
  summary: "The device token issuer's discovery document (AWS)",
  description: 'Names the device issuer and its key set; API Gateway reads it to verify device tokens.',
  responses: {
    200: { description: 'The discovery document.', schema: OpenIdConfiguration, headers: { 'Cache-Control': HEADERS['Cache-Control'] } },
    ...COMMON_PROBLEMS,
  },
});

/** GET /device/.well-known/jwks.json (AWS only) */
export const deviceIssuerJwks = defineRoute({
  ...common,
  id: 'DeviceIssuerJwks',
  path: `${DEVICE_ISSUER_PATH}/.well-known/jwks.json`,
  summary: "The device token issuer's public key (AWS)",
  description: 'The public half of the KMS key that signs device tokens, as a JSON Web Key Set.',
  responses: {
    200: {
      description: 'The key set.',
      schema: JsonWebKeySet,
      contentType: 'application/jwk-set+json',
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    503: problem('ServiceUnavailable', 'KMS throttles or is briefly unavailable. Retry after `Retry-After` seconds.'),
    ...COMMON_PROBLEMS,
  },
});

/** The device issuer's routes, served on AWS only (see the module comment). */
export const DEVICE_ISSUER_ROUTES = [deviceIssuerDiscovery, deviceIssuerJwks] as const;
