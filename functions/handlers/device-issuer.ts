import { DEVICE_ISSUER_PATH, deviceIssuerDiscovery, deviceIssuerJwks } from '../contract/routes/device-issuer.js';
import { awsDeviceIssuer } from '../platform/composition/identity.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

/** How long verifiers may keep either document, seconds (the key changes only with a new stack). */
const CACHE_CONTROL = 'public, max-age=3600';

/** GET {auth_url}/device/.well-known/openid-configuration: the device issuer and where its key set is. */
const discovery = routeHandler(deviceIssuerDiscovery, async () => {
  const { issuer, discovery: discoveryDocument } = await awsDeviceIssuer();
  // The issuer is `{auth_url}/device`; devices get their tokens at `{auth_url}/token`.
  const authUrl = issuer.endsWith(DEVICE_ISSUER_PATH) ? issuer.slice(0, -DEVICE_ISSUER_PATH.length) : issuer;
  const tokenEndpoint = `${authUrl}/token`;
  return jsonResponse(200, discoveryDocument(tokenEndpoint), { 'cache-control': CACHE_CONTROL });
});

/** GET {auth_url}/device/.well-known/jwks.json: the public half of the KMS key (fetched once per cold start). */
const jwks = routeHandler(deviceIssuerJwks, async () =>
  jsonResponse(200, await (await awsDeviceIssuer()).keys.jwks(), {
    'cache-control': CACHE_CONTROL,
    'content-type': 'application/jwk-set+json',
  }),
);

/** The device issuer's two documents on AWS (functions/contract/routes/device-issuer.ts), one function. */
export const handler = routeDispatcher([
  [deviceIssuerDiscovery, discovery],
  [deviceIssuerJwks, jwks],
]);
