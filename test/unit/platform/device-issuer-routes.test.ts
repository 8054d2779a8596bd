/**
 * The device issuer's function (functions/handlers/device-issuer.ts), which only AWS runs, so no e2e test reaches it:
 * each of its two route keys gets its own document, with the KMS key set stood in for.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { routeKeyOf } from '../../../functions/contract/route.js';
import { deviceIssuerDiscovery, deviceIssuerJwks } from '../../../functions/contract/routes/device-issuer.js';
import { handler } from '../../../functions/handlers/device-issuer.js';
import { httpApiEvent } from '../../support/http-event.js';
import { lambdaContext } from '../../support/lambda-context.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

const ISSUER = 'https://auth.example.com/device';
const JWKS = { keys: [{ kty: 'EC', kid: 'device-key', crv: 'P-256', x: 'x', y: 'y' }] };

vi.mock('../../../functions/platform/composition/identity.js', () => ({
  awsDeviceIssuer: async () => ({
    issuer: ISSUER,
    keys: { jwks: async () => JWKS },
    discovery: (tokenEndpoint: string) => ({ issuer: ISSUER, token_endpoint: tokenEndpoint, jwks_uri: `${ISSUER}/.well-known/jwks.json` }),
  }),
}));

/** A GET of `path` as API Gateway hands it to the function, with `routeKey`. */
function get(routeKey: string, path: string): Promise<APIGatewayProxyStructuredResultV2> {
  const event = httpApiEvent(routeKey, path, { apiId: 'auth', domainName: 'auth.example.com' });
  return handler(event, lambdaContext());
}

describe('the device issuer function', () => {
  it('answers its key set route with the key set, as application/jwk-set+json, cacheable for an hour', async () => {
    const response = await get(routeKeyOf(deviceIssuerJwks), deviceIssuerJwks.path);
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=3600' });
    expect(JSON.parse(response.body ?? '')).toEqual(JWKS);
  });

  it('answers its discovery route with the issuer and the token endpoint beside it', async () => {
    const response = await get(routeKeyOf(deviceIssuerDiscovery), deviceIssuerDiscovery.path);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body ?? '')).toMatchObject({ issuer: ISSUER, token_endpoint: 'https://auth.example.com/token' });
  });

  it('answers a route key it does not serve with a 500 problem rather than one of its documents', async () => {
    const response = await get('GET /device/.well-known/other.json', '/device/.well-known/other.json');
    expect(response.statusCode).toBe(500);
    expect(response.headers?.['content-type']).toBe('application/problem+json');
  });
});
