/**
 * The authentication address: token request and answer, the issuer's key set; and the OpenAPI document itself with its
 * rendered reference page.
 */
import * as z from 'zod';
import { PASSWORD_POLICY_TEXT } from '../../core/access/password-policy.js';
import { REFRESH_TOKEN_LIFETIME_DAYS } from '../../core/access/user-tokens.js';
import { ACCEPTED_ALGORITHMS } from '../protocol.js';

export const SignInRequest = z
  .object({
    grant_type: z
      .literal('password')
      .describe('May be left out; `password` when given (what tells a sign-in from a refresh, whose `grant_type` is `refresh_token`).')
      .optional(),
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024).meta({ format: 'password' }),
    new_password: z
      .string()
      .min(1)
      .max(1024)
      .meta({ format: 'password' })
      .describe(
        `The password to set: answers the \`new_password_required\` challenge (an invited or reset user), or changes the password of a user who has none pending. It must have ${PASSWORD_POLICY_TEXT}; another gets 400 stating the policy.`,
      )
      .optional(),
  })
  .meta({
    id: 'SignInRequest',
    description: "A user's sign-in with username and password (and, to set a new password, `new_password`).",
    examples: [{ username: 'alice', password: 'correct horse battery staple' }],
  });

export const RefreshTokenRequest = z
  .object({
    grant_type: z.literal('refresh_token'),
    refresh_token: z.string().min(1).max(8192).meta({ format: 'password' }).describe('The refresh token a sign-in answered.'),
    scope: z.string().max(1024).describe("Ignored: the new token carries the user's scopes as they are now.").optional(),
  })
  .meta({
    id: 'RefreshTokenRequest',
    description:
      "OAuth 2.0 refresh (RFC 6749 §6): a new access token for a user's refresh token, as JSON or form-encoded. No client authentication.",
    examples: [{ grant_type: 'refresh_token', refresh_token: '<refresh token>' }],
  });

/**
 * The JSON body of the token endpoint: a user's sign-in, or a refresh, told apart by `grant_type` (absent or
 * `password`: a sign-in), so that a bad body's violations name the members of the one it is (`/password`).
 */
export const TokenRequest = z
  .discriminatedUnion('grant_type', [SignInRequest, RefreshTokenRequest])
  .meta({ id: 'TokenRequest', description: "A user's sign-in (username and password), or a refresh (RFC 6749 §6)." });

export const ClientCredentialsRequest = z
  .object({
    grant_type: z
      .string()
      .min(1)
      .max(64)
      .describe('`client_credentials`; another grant (but `refresh_token`, RefreshTokenRequest) gives 400 `unsupported_grant_type`.'),
    // No length bounds here: an empty or over-long client id or secret is a failed client authentication (401
    // invalid_client, RFC 6749 §5.2), the same answer as through HTTP Basic, whose credential this schema never sees.
    // The bounds are the grant's (functions/core/devices/tokens.ts), within the address's body limit.
    client_id: z
      .string()
      .describe(
        "The client id: a device's (`{companyId}~{deviceId}`, at most 257 characters) or an API client's (`api_` and a ULID); another is an unknown client, 401 `invalid_client`. May be left out with HTTP Basic client authentication.",
      )
      .optional(),
    client_secret: z
      .string()
      .meta({ format: 'password' })
      .describe(
        'The client secret (43 characters as issued; over 256 is a wrong secret, 401 `invalid_client`); leave it out with HTTP Basic client authentication.',
      )
      .optional(),
    scope: z
      .string()
      .max(1024)
      .describe(
        "An API client's scopes, space-separated (RFC 6749 §3.3): some of its role's, to narrow the token; absent, all of them; one its role does not hold is 400 `invalid_scope`. Ignored for a device: its token always has the one scope `device`.",
      )
      .optional(),
  })
  .meta({
    id: 'ClientCredentialsRequest',
    description:
      'OAuth 2.0 client credentials grant (RFC 6749 §4.4) of a device or an API client. The client authenticates with `client_id` and `client_secret` here, or with HTTP Basic (`Authorization: Basic base64(urlencode(client_id) ":" urlencode(client_secret))`, RFC 6749 §2.3.1), not both. Other members are ignored.',
    examples: [{ grant_type: 'client_credentials', client_id: 'acme~acme-kiosk-0001', client_secret: '<secret>' }],
  });

export const OAuthErrorBody = z
  .object({
    error: z
      .enum([
        'invalid_request',
        'invalid_client',
        'invalid_grant',
        'unsupported_grant_type',
        'unsupported_token_type',
        'invalid_scope',
        'temporarily_unavailable',
      ])
      .describe(
        'RFC 6749 §5.2 error code (`invalid_grant`: a refresh token that is unknown, expired or revoked, or whose user is disabled or deleted; `invalid_scope`: an API client asked for a scope its role does not hold); `unsupported_token_type` (RFC 7009 §2.2.1) when an access token is given to revoke; `temporarily_unavailable` (RFC 6749 §4.1.2.1) on a 429 or 503 with `Retry-After`.',
      ),
    error_description: z.string().describe('What went wrong, for a developer.'),
  })
  .strict()
  .meta({
    id: 'OAuthErrorBody',
    description: 'A refused client credentials, refresh or revocation request (RFC 6749 §5.2, RFC 7009 §2.2.1).',
  });

export const TokenResponse = z
  .object({
    access_token: z.string().describe('The JWT to send as `Authorization: Bearer <access_token>`.'),
    token_type: z.literal('Bearer'),
    expires_in: z.int().min(1).describe('Token lifetime, seconds.'),
    refresh_token: z
      .string()
      .describe(
        `Only on a user's sign-in: exchange it for a new access token (RefreshTokenRequest) until it expires (${REFRESH_TOKEN_LIFETIME_DAYS} days) or is revoked; keep it secret.`,
      )
      .optional(),
    scope: z.string().describe("Only on an API client's token: its scopes, space-separated (RFC 6749 §5.1).").optional(),
  })
  .strict()
  .meta({ id: 'TokenResponse' });

/**
 * A token revocation request (RFC 7009 §2.1), form-encoded or JSON: the refresh token to revoke. No client
 * authentication: the app client is public, and holding the token is what allows revoking it.
 */
export const RevokeRequest = z
  .object({
    token: z.string().min(1).max(8192).meta({ format: 'password' }).describe('The refresh token to revoke, as a sign-in answered it.'),
    // Unbounded but for the body's limit: RFC 7009 §2.1 has a hint the server does not understand ignored, not refused.
    token_type_hint: z
      .string()
      .describe('Ignored (RFC 7009 §2.1 allows it): only refresh tokens are revoked; an access token is 400 `unsupported_token_type`.')
      .optional(),
  })
  .meta({
    id: 'RevokeRequest',
    description: "Revocation of a user's refresh token (RFC 7009 §2.1), as JSON or form-encoded. Other members are ignored.",
    examples: [{ token: '<refresh token>', token_type_hint: 'refresh_token' }],
  });

/** API Gateway's own answer when a route's throttle refuses a request (AWS only): `{"message":"Too Many Requests"}`. */
export const GatewayThrottledBody = z
  .object({ message: z.string() })
  .strict()
  .meta({ id: 'GatewayThrottledBody', description: "API Gateway's own body of a throttled request (AWS only)." });

/** The token endpoint's form body: a device's client credentials grant, or a refresh. */
export const TokenForm = z
  .union([RefreshTokenRequest, ClientCredentialsRequest])
  .meta({ id: 'TokenForm', description: "A device's client credentials grant (RFC 6749 §4.4), or a refresh (RFC 6749 §6)." });

/** A public JWK: open, since a key may carry other registered members (`key_ops`, `x5c`, ...). */
export const JsonWebKey = z
  .object({
    kty: z.enum(['RSA', 'EC', 'OKP']),
    kid: z.string().optional(),
    use: z.string().optional(),
    alg: z.enum(ACCEPTED_ALGORITHMS as [string, ...string[]]).optional(),
    n: z.string().optional(),
    e: z.string().optional(),
    crv: z.string().optional(),
    x: z.string().optional(),
    y: z.string().optional(),
  })
  .loose()
  .meta({ id: 'JsonWebKey', description: 'A public JSON Web Key (RFC 7517).' });

export const JsonWebKeySet = z
  .object({ keys: z.array(JsonWebKey) })
  .strict()
  .meta({ id: 'JsonWebKeySet' });

/** The body of GET /openapi.json. */
export const OpenApiDocumentBody = z
  .object({ openapi: z.literal('3.1.0') })
  .loose()
  .meta({ id: 'OpenApiDocumentBody', description: 'The OpenAPI 3.1 description of the service.' });

/** The body of GET /docs: an HTML page. */
export const HtmlPage = z.string().meta({ id: 'HtmlPage', contentMediaType: 'text/html', description: 'An HTML page (UTF-8).' });

/** The body of GET /docs/redoc.standalone.js: a browser script. */
export const JavaScriptSource = z
  .string()
  .meta({ id: 'JavaScriptSource', contentMediaType: 'application/javascript', description: 'A browser script (UTF-8).' });
