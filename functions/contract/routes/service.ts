/** Public routes: the OpenAPI document (main address), token issuance and key set (authentication address). */
import { IgnoredQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import { JsonWebKeySet, OpenApiDocumentBody, TokenRequest, TokenResponse } from '../schemas/auth.js';
import { PayloadTooLargeProblem } from '../schemas/problems.js';
import { COMMON_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';

/** GET /openapi.json */
export const openApiDocument = defineRoute({
  id: 'OpenApiDocument',
  api: 'main',
  method: 'GET',
  path: '/openapi.json',
  summary: 'This OpenAPI document',
  description: 'The OpenAPI 3.1 description of the whole service, generated from the route definitions; no bearer token needed.',
  tags: ['Meta'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false },
  entry: 'functions/handlers/openapi.ts',
  responses: {
    200: { description: 'The OpenAPI 3.1 description of the service.', schema: OpenApiDocumentBody },
    ...COMMON_PROBLEMS,
  },
});

/** POST /token */
export const authToken = defineRoute({
  id: 'AuthToken',
  api: 'auth',
  method: 'POST',
  path: '/token',
  summary: 'Get an access token',
  description: 'Exchanges a username and password for a JWT to use as the bearer token on the other addresses.',
  tags: ['Authentication'],
  scope: null,
  request: {
    query: IgnoredQuery,
    body: { kind: 'json', schema: TokenRequest, invalidDetail: 'The body must be {"username": "...", "password": "..."}.' },
  },
  // Locally the local issuer; on AWS Cognito InitiateAuth, an unauthenticated API: no permission at all.
  access: { storage: false, memorySize: 256 },
  entry: 'functions/handlers/auth-token.ts',
  responses: {
    200: { description: 'The access token.', schema: TokenResponse, headers: { 'Cache-Control': HEADERS['Cache-Control'] } },
    400: PROBLEM_RESPONSES.BadRequest,
    401: problem('Unauthorized', 'The username or password is wrong.'),
    413: { description: "Content Too Large: the request body exceeds the address's limit.", schema: PayloadTooLargeProblem },
    503: problem('ServiceUnavailable', 'On AWS: Amazon Cognito throttles sign-ins. Retry after `Retry-After` seconds.'),
    ...COMMON_PROBLEMS,
  },
});

/** GET /.well-known/jwks.json */
export const authJwks = defineRoute({
  id: 'AuthJwks',
  api: 'auth',
  method: 'GET',
  path: '/.well-known/jwks.json',
  summary: "The issuer's public keys",
  description: 'The JSON Web Key Set used to verify access tokens.',
  tags: ['Authentication'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false },
  entry: 'functions/handlers/auth-jwks.ts',
  responses: {
    200: {
      description: 'The key set.',
      schema: JsonWebKeySet,
      contentType: 'application/jwk-set+json',
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...COMMON_PROBLEMS,
  },
});
