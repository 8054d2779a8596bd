/**
 * The authorization server's metadata at the authentication address (RFC 8414, and the same document under OpenID
 * Connect Discovery 1.0's name), so that a standard OAuth library configures itself from the issuer's address alone:
 * where tokens are issued and revoked, the key set, the grants and the client authentication methods.
 *
 * Served by the local runtime only (DISCOVERY_ROUTES, left out of AWS_ROUTES): RFC 8414 §3.3 has a document name the
 * address it is fetched from as `issuer`, and locally the issuer of every token is `{auth_url}`. On AWS clients' tokens
 * are the device issuer's, `{auth_url}/device`, whose own document (device-issuer.ts) says the same things there.
 */
import * as z from 'zod';
import { IgnoredQuery } from '../parameters.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { COMMON_PROBLEMS, HEADERS } from '../schemas/responses.js';

/** The one function serving both documents (it reads its settings, nothing else). */
const DISCOVERY_ENTRY = 'functions/handlers/auth-discovery.ts';

/** The metadata (RFC 8414 §2; OpenID Connect Discovery 1.0 §3 names the same members). */
export const AuthorizationServerMetadata = z
  .object({
    issuer: z.url().describe('Exactly the `iss` of the tokens the token endpoint issues to clients.'),
    token_endpoint: z.url().describe('`{auth_url}/token`.'),
    jwks_uri: z.url().describe("The issuer's key set."),
    revocation_endpoint: z.url().describe('`{auth_url}/revoke` (RFC 7009: refresh tokens).'),
    grant_types_supported: z.array(z.string()).describe('`client_credentials` and `refresh_token`.'),
    token_endpoint_auth_methods_supported: z.array(z.string()).describe('`client_secret_basic` and `client_secret_post`.'),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
  })
  .loose()
  .meta({ id: 'AuthorizationServerMetadata', description: 'OAuth 2.0 Authorization Server Metadata (RFC 8414).' });

/** What the two routes share: public, one function reading the issuer's settings. */
const common = {
  api: 'auth',
  method: 'GET',
  tags: ['Authentication'],
  scope: null,
  request: { query: IgnoredQuery },
  access: { storage: false, memorySize: 256 },
  entry: DISCOVERY_ENTRY,
  // Never deployed (DISCOVERY_ROUTES): the device issuer's document serves this on AWS.
  onAws: { kind: 'entry' },
  responses: {
    200: {
      description: 'The metadata.',
      schema: AuthorizationServerMetadata,
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...COMMON_PROBLEMS,
  },
} as const;

/** GET /.well-known/oauth-authorization-server */
export const authServerMetadata = defineRoute({
  ...common,
  id: 'AuthServerMetadata',
  path: '/.well-known/oauth-authorization-server',
  summary: "The authorization server's metadata (RFC 8414)",
  description:
    "Where clients get and revoke tokens, the key set that verifies them, the grants and client authentication methods: what OAuth libraries read to configure themselves from the issuer. Local runtime only: on AWS the issuer of API clients' tokens is `{auth_url}/device`, whose metadata is `{auth_url}/device/.well-known/openid-configuration`.",
});

/** GET /.well-known/openid-configuration */
export const authOpenIdConfiguration = defineRoute({
  ...common,
  id: 'AuthOpenIdConfiguration',
  path: '/.well-known/openid-configuration',
  summary: "The authorization server's metadata (OpenID Connect Discovery name)",
  description:
    'The same document as `/.well-known/oauth-authorization-server`, for libraries that look for it under this name. Local runtime only, as that one.',
});

/** The two documents: routes of the local runtime, not of AWS_ROUTES. */
export const DISCOVERY_ROUTES: readonly RouteDefinition[] = [authServerMetadata, authOpenIdConfiguration];
