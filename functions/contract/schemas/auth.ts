/**
 * The authentication address: token request and answer, the issuer's key set; and the OpenAPI document itself with its
 * rendered reference page.
 */
import * as z from 'zod';
import { ACCEPTED_ALGORITHMS } from '../protocol.js';

export const TokenRequest = z
  .object({
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024).meta({ format: 'password' }),
  })
  .meta({ id: 'TokenRequest', examples: [{ username: 'alice', password: 'correct horse battery staple' }] });

export const ClientCredentialsRequest = z
  .object({
    grant_type: z.string().min(1).max(64).describe('`client_credentials`; another grant gives 400 `unsupported_grant_type`.'),
    // No length bounds here: an empty or over-long client id or secret is a failed client authentication (401
    // invalid_client, RFC 6749 §5.2), the same answer as through HTTP Basic, whose credential this schema never sees.
    // The bounds are the grant's (functions/core/devices/tokens.ts), within the address's body limit.
    client_id: z
      .string()
      .describe(
        "The device's client id (`{companyId}~{deviceId}`, at most 257 characters; another is an unknown client, 401 `invalid_client`); may be left out with HTTP Basic client authentication.",
      )
      .optional(),
    client_secret: z
      .string()
      .meta({ format: 'password' })
      .describe(
        "The device's client secret (43 characters as issued; over 256 is a wrong secret, 401 `invalid_client`); leave it out with HTTP Basic client authentication.",
      )
      .optional(),
    scope: z.string().max(1024).describe('Ignored: a device token always has the one scope `device`.').optional(),
  })
  .meta({
    id: 'ClientCredentialsRequest',
    description:
      'OAuth 2.0 client credentials grant (RFC 6749 §4.4) of a device. The client authenticates with `client_id` and `client_secret` here, or with HTTP Basic (`Authorization: Basic base64(urlencode(client_id) ":" urlencode(client_secret))`, RFC 6749 §2.3.1), not both. Other members are ignored.',
    examples: [{ grant_type: 'client_credentials', client_id: 'acme~acme-kiosk-0001', client_secret: '<secret>' }],
  });

export const OAuthErrorBody = z
  .object({
    error: z
      .enum(['invalid_request', 'invalid_client', 'unsupported_grant_type', 'temporarily_unavailable'])
      .describe('RFC 6749 §5.2 error code; `temporarily_unavailable` (RFC 6749 §4.1.2.1) on a 429 or 503 with `Retry-After`.'),
    error_description: z.string().describe('What went wrong, for a developer.'),
  })
  .strict()
  .meta({ id: 'OAuthErrorBody', description: 'A refused client credentials request (RFC 6749 §5.2).' });

export const TokenResponse = z
  .object({
    access_token: z.string().describe('The JWT to send as `Authorization: Bearer <access_token>`.'),
    token_type: z.literal('Bearer'),
    expires_in: z.int().min(1).describe('Token lifetime, seconds.'),
  })
  .strict()
  .meta({ id: 'TokenResponse' });

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
