/**
 * Public routes: the OpenAPI document and its rendered reference page with the page's script (main address), token
 * issuance and key set (authentication address).
 */
import * as z from 'zod';
import { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_DAYS } from '../../core/access/user-tokens.js';
import { OAuthError } from '../../core/shared/errors.js';
import { IgnoredQuery } from '../parameters.js';
import { defineRoute } from '../route.js';
import {
  GatewayThrottledBody,
  HtmlPage,
  JavaScriptSource,
  JsonWebKeySet,
  OAuthErrorBody,
  OpenApiDocumentBody,
  RevokeRequest,
  TokenForm,
  TokenRequest,
  TokenResponse,
} from '../schemas/auth.js';
import { PayloadTooLargeProblem, SignInRefusedProblem, TooManyRequestsProblem } from '../schemas/problems.js';
import { BUSY_PROBLEMS, COMMON_PROBLEMS, HEADERS, PROBLEM_RESPONSES, serviceUnavailable } from '../schemas/responses.js';

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
  // The document's `servers` are the three addresses.
  access: { storage: false, apiAddresses: true },
  entry: 'functions/handlers/openapi.ts',
  responses: {
    200: { description: 'The OpenAPI 3.1 description of the service.', schema: OpenApiDocumentBody },
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});

/**
 * The script that renders the reference page: Redoc's standalone bundle, as a module specifier of the installed
 * `redoc` package (about 1.1 MB).
 */
export const REDOC_SCRIPT_MODULE = 'redoc/bundles/redoc.standalone.js';

/** GET /docs */
export const apiReference = defineRoute({
  id: 'ApiReference',
  api: 'main',
  method: 'GET',
  path: '/docs',
  summary: 'API reference',
  description:
    'This document rendered as a browsable reference page (Redoc), for people; no bearer token needed. The page loads its script (`docs/redoc.standalone.js`) and this document (`openapi.json`) from this address, by URLs relative to itself, and nothing from anywhere else: its `Content-Security-Policy` allows only this origin.',
  tags: ['Meta'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false, memorySize: 256 },
  entry: 'functions/handlers/api-reference.ts',
  responses: {
    200: {
      description: 'The reference page.',
      schema: HtmlPage,
      contentType: 'text/html',
      headers: {
        'Content-Security-Policy': {
          description:
            "What the page may load: scripts from this origin and the page's own inline start-up script (by its hash), styles from this origin and inline (Redoc injects its styles), this document from this origin, the search worker from a `blob:` URL; nothing else.",
          schema: z.string(),
          required: true,
        },
      },
    },
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});

/** GET /docs/redoc.standalone.js */
export const apiReferenceScript = defineRoute({
  id: 'ApiReferenceScript',
  api: 'main',
  method: 'GET',
  path: '/docs/redoc.standalone.js',
  summary: 'Script of the API reference page',
  description:
    "Redoc's standalone bundle (the `redoc` package the service is built with), which GET /docs loads to render this document; browsers may keep it a day. No bearer token needed.",
  tags: ['Meta'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false, memorySize: 256, packageFiles: [REDOC_SCRIPT_MODULE] },
  entry: 'functions/handlers/api-reference-script.ts',
  responses: {
    200: {
      description: 'The script.',
      schema: JavaScriptSource,
      contentType: 'application/javascript',
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});

/**
 * What the token endpoint's function reads and writes, locally and on AWS: a device's or an API client's stored
 * credential (client credentials grant; a client's `lastUsedAt` is updated) and the failed attempts' counts, by key
 * only.
 */
const TOKEN_TABLES = { devices: 'R', clientFailures: 'Item', apiClients: 'Item' } as const;

/** A refused form of the auth address's POST routes: RFC 6749 §5.2 `invalid_request`, naming each violation. */
const invalidOAuthForm = (violations: readonly { path: string; message: string }[]) =>
  new OAuthError('invalid_request', violations.map((violation) => `${violation.path}: ${violation.message}`).join('; '));

/** The 413 of the auth address's POST routes. */
const BODY_TOO_LARGE = { description: "Content Too Large: the request body exceeds the address's limit.", schema: PayloadTooLargeProblem };

/** POST /token */
export const authToken = defineRoute({
  id: 'AuthToken',
  api: 'auth',
  method: 'POST',
  path: '/token',
  summary: 'Get an access token',
  description: `A user exchanges a username and password (JSON) for a JWT to use as the bearer token on the other addresses (${ACCESS_TOKEN_LIFETIME_SECONDS / 60} minutes) and a refresh token (${REFRESH_TOKEN_LIFETIME_DAYS} days). A user who must set a new password (invited, or reset) gets 401 with \`challenge: "new_password_required"\` and sends the same JSON with \`new_password\` added; \`new_password\` on any sign-in changes the password. The refresh token is exchanged for a new access token, carrying the user's role and companies as they are then, with the OAuth 2.0 refresh request (RFC 6749 §6, form-encoded or JSON \`{"grant_type": "refresh_token", "refresh_token"}\`); a refused one gets 400 \`invalid_grant\`, at once for a disabled or deleted user. A device uses the OAuth 2.0 client credentials grant (RFC 6749 §4.4, \`application/x-www-form-urlencoded\`) with the client id and secret issued for it, in the form or with HTTP Basic, and gets a token that acts only as that device (scope \`device\`, at most 15 minutes; claims \`sub\` the device id, \`companies\` its company, \`client_id\`, \`cred\` the credential id). An API client uses the same grant with its client id (\`api_…\`) and secret (the previous secret too, until its \`previousSecretExpiresAt\`), optionally narrowing \`scope\`, and gets a token acting for its one company with its role's scopes (at most 15 minutes; claims \`sub\` and \`client_id\` the client id, \`username\` \`client:{clientId}\`, \`companies\`, \`scope\`; the answer's \`scope\` lists them); each request with it is refused (401) within 30 s of the client being disabled, deleted or given a lower role. A refused client credentials or refresh request is answered as RFC 6749 §5.2 asks: \`application/json\` \`{ "error", "error_description" }\`.`,
  tags: ['Authentication'],
  scope: null,
  request: {
    query: IgnoredQuery,
    body: {
      kind: 'json',
      schema: TokenRequest,
      invalidDetail:
        'The body must be {"username": "...", "password": "..."} (with "new_password" to set one), or {"grant_type": "refresh_token", "refresh_token": "..."}.',
      form: {
        schema: TokenForm,
        invalid: invalidOAuthForm,
      },
    },
  },
  // Locally the local issuer, which reads a device's stored credential for the client credentials grant and counts
  // attempts per key (a conditional update reserves one, a delete clears them: items by key only).
  access: { storage: true, tables: TOKEN_TABLES, memorySize: 256 },
  entry: 'functions/handlers/auth-token.ts',
  // On AWS, users sign in through Cognito InitiateAuth (an unauthenticated API: only the app client id) and devices
  // get tokens signed by the device token key, whose key policy is the grant (kms:Sign); the same table grants, and
  // the memory size gives the scrypt hash of client secrets its CPU.
  onAws: {
    kind: 'function',
    entry: 'functions/handlers/auth-cognito-token.ts',
    access: { storage: true, tables: TOKEN_TABLES, memorySize: 512, deviceKey: 'sign', deviceSettings: true, cognitoClient: true },
    ownThrottle: true,
  },
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: {
      description: "The access token; on a user's sign-in, also the refresh token.",
      schema: TokenResponse,
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    400: {
      ...PROBLEM_RESPONSES.BadRequest,
      description:
        'Bad Request: a JSON body that is not valid, or a `new_password` that does not meet the password policy, which `detail` states (problem+json); or (application/json, RFC 6749 §5.2) a form that is not valid, a repeated member or two client authentication methods (`invalid_request`), a grant other than `client_credentials` and `refresh_token` (`unsupported_grant_type`), a `scope` beyond those of the API client role (`invalid_scope`), or a refresh token that is unknown, expired or revoked, or whose user is disabled or deleted (`invalid_grant`).',
      alternatives: { 'application/json': OAuthErrorBody },
    },
    401: {
      ...PROBLEM_RESPONSES.Unauthorized,
      schema: SignInRefusedProblem,
      description:
        'Unauthorized: the username or password is wrong, or the user is disabled (problem+json); or the password is right but the user must set a new one (problem+json, type `…/problems/new-password-required`, `challenge: "new_password_required"`: send the same JSON with `new_password` added); or, for the client credentials grant (application/json `invalid_client`), the client is unknown, the secret wrong (or a previous secret past its overlap), the API client disabled, or the device deleted or without credentials. With HTTP Basic client authentication the answer carries `WWW-Authenticate: Basic realm="device"`.',
      headers: {
        'WWW-Authenticate': {
          ...HEADERS['WWW-Authenticate'],
          required: false,
          description:
            '`Bearer` for a user (sign-in refused or challenged), `Basic realm="device"` for a device that authenticated with HTTP Basic.',
        },
      },
      alternatives: { 'application/json': OAuthErrorBody },
    },
    413: BODY_TOO_LARGE,
    429: {
      description:
        'Too Many Requests: this client id (client credentials grant, application/json `temporarily_unavailable`), or locally this username (problem+json), has made as many attempts without a success as allowed from this address (its /64 for IPv6) within the window that opened at its first one (by default 5 in 5 minutes; simultaneous attempts count, the right secret too); every attempt from there, with the right secret too, gets this answer until the window closes, `Retry-After` seconds from now. Other addresses, and other clients, are not affected. On AWS, the token route\'s throttling answers 429 too, with API Gateway\'s own `{"message":"Too Many Requests"}`.',
      schema: TooManyRequestsProblem,
      alternatives: { 'application/json': OAuthErrorBody },
      headers: { 'Retry-After': { ...HEADERS['Retry-After'], description: 'Seconds until the window closes (at least 1).' } },
    },
    503: {
      ...serviceUnavailable(
        'Service Unavailable: a backend cannot be reached (among them the table counting attempts: then no secret is checked), or on AWS Amazon Cognito throttles sign-ins or refreshes, or locally the service has as many sign-ins under way as it checks at once (problem+json); or, for the client credentials grant (application/json `temporarily_unavailable`), the service has as many client authentications under way as it checks at once. Retry after `Retry-After` seconds.',
      ),
      alternatives: { 'application/json': OAuthErrorBody },
    },
    ...COMMON_PROBLEMS,
  },
});

/** POST /revoke: served by the token route's function (the same entries and access). */
export const authRevoke = defineRoute({
  id: 'AuthRevoke',
  api: 'auth',
  method: 'POST',
  path: '/revoke',
  summary: 'Revoke a refresh token (sign out)',
  description: `Token revocation (RFC 7009): the refresh token renews nothing from then on, so a user who signs out is not signed in again by whoever finds it. Form-encoded or JSON \`{"token"}\`; no client authentication. An unknown, expired or already revoked token is answered 200 as well (RFC 7009 §2.2). The access tokens it renewed stay valid until they expire (${ACCESS_TOKEN_LIFETIME_SECONDS / 60} minutes at most): forget them. An access token is 400 \`unsupported_token_type\`. A user's own password change (\`new_password\` on POST /token) ends every other session of theirs the same way.`,
  tags: ['Authentication'],
  scope: null,
  request: {
    query: IgnoredQuery,
    body: {
      kind: 'json',
      schema: RevokeRequest,
      invalidDetail: 'The body must be {"token": "<refresh token>"}, or the same form-encoded (RFC 7009 §2.1).',
      form: {
        schema: RevokeRequest,
        invalid: invalidOAuthForm,
      },
    },
  },
  access: authToken.access,
  entry: authToken.entry,
  onAws: authToken.onAws,
  responses: {
    200: {
      description:
        'The token is revoked, or was not one to revoke (unknown, expired, already revoked): either way it renews nothing. No body.',
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    400: {
      ...PROBLEM_RESPONSES.BadRequest,
      description:
        'Bad Request: a JSON body that is not valid (problem+json); or (application/json, RFC 6749 §5.2) a form that is not valid or a repeated member (`invalid_request`), or an access token given (`unsupported_token_type`, RFC 7009 §2.2.1).',
      alternatives: { 'application/json': OAuthErrorBody },
    },
    413: BODY_TOO_LARGE,
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    429: {
      description:
        'Too Many Requests (AWS only): the route\'s throttle, a bucket of its own beside the token route\'s, refused the request, with API Gateway\'s own `{"message":"Too Many Requests"}` and no Retry-After; retry with backoff.',
      schema: GatewayThrottledBody,
      contentType: 'application/json',
    },
    503: serviceUnavailable(
      'Service Unavailable: a backend cannot be reached, or on AWS Amazon Cognito throttles revocations (problem+json). Retry after `Retry-After` seconds.',
    ),
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
  // On AWS the Cognito pool's key set, proxied.
  onAws: { kind: 'cognito-jwks' },
  responses: {
    200: {
      description: 'The key set.',
      schema: JsonWebKeySet,
      contentType: 'application/jwk-set+json',
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...BUSY_PROBLEMS,
    ...COMMON_PROBLEMS,
  },
});
