/** The authentication address: token request and answer, the issuer's key set; and the OpenAPI document itself. */
import { z } from 'zod';
import { ACCEPTED_ALGORITHMS } from '../../platform/auth.js';

export const TokenRequest = z
  .object({
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024).meta({ format: 'password' }),
  })
  .meta({ id: 'TokenRequest', examples: [{ username: 'alice', password: 'correct horse battery staple' }] });

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
