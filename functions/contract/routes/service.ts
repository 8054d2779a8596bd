/** Public routes: the OpenAPI document (main address), token issuance and key set (authentication address). */
import { IgnoredQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import { OAuthError } from '../../core/errors.js';
import {
  ClientCredentialsRequest,
  JsonWebKeySet,
  OAuthErrorBody,
  OpenApiDocumentBody,
  TokenRequest,
  TokenResponse,
} from '../schemas/auth.js';
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
  description:
    'A user exchanges a username and password (JSON) for a JWT to use as the bearer token on the other addresses. A device uses the OAuth 2.0 client credentials grant (RFC 6749 §4.4, `application/x-www-form-urlencoded`) with the client id and secret issued for it, in the form or with HTTP Basic, and gets a token that acts only as that device (scope `device`, at most 15 minutes; claims `sub` the device id, `companies` its company, `client_id`, `cred` the credential id). A refused client credentials request is answered as RFC 6749 §5.2 asks: `application/json` `{ "error", "error_description" }`.',
  tags: ['Authentication'],
  scope: null,
  request: {
    query: IgnoredQuery,
    body: {
      kind: 'json',
      schema: TokenRequest,
      invalidDetail: 'The body must be {"username": "...", "password": "..."}.',
      form: {
        schema: ClientCredentialsRequest,
        invalid: (violations) =>
          new OAuthError('invalid_request', violations.map((violation) => `${violation.path}: ${violation.message}`).join('; ')),
      },
    },
  },
  // Locally the local issuer, which reads a device's stored credential for the client credentials grant; on AWS the
  // route is served by AUTH_ROUTES_ON_AWS's function instead.
  access: { storage: true, tables: { devices: 'R' }, memorySize: 256 },
  entry: 'functions/handlers/auth-token.ts',
  responses: {
    200: { description: 'The access token.', schema: TokenResponse, headers: { 'Cache-Control': HEADERS['Cache-Control'] } },
    400: {
      ...PROBLEM_RESPONSES.BadRequest,
      description:
        'Bad Request: a JSON body that is not valid (problem+json); or, for the client credentials grant (application/json, RFC 6749 §5.2), a form that is not valid, a repeated member or two client authentication methods (`invalid_request`), or a grant other than `client_credentials` (`unsupported_grant_type`).',
      alternatives: { 'application/json': OAuthErrorBody },
    },
    401: {
      ...PROBLEM_RESPONSES.Unauthorized,
      description:
        'Unauthorized: the username or password is wrong (problem+json); or, for the client credentials grant (application/json `invalid_client`), the client is unknown, the secret wrong, or the device deleted or without credentials. With HTTP Basic client authentication the answer carries `WWW-Authenticate: Basic realm="device"`.',
      headers: {
        'WWW-Authenticate': {
          ...HEADERS['WWW-Authenticate'],
          required: false,
          description: '`Bearer` for a user, `Basic realm="device"` for a device that authenticated with HTTP Basic.',
        },
      },
      alternatives: { 'application/json': OAuthErrorBody },
    },
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
