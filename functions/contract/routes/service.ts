/** Public routes: the OpenAPI document (main address), token issuance and key set (authentication address). */
import { z } from 'zod';
import { NoQuery } from '../parameters.js';
import { defineRoute } from '../route.js';

/** The token request of the authentication address (docs/contract.md, "Authentication and permissions"). */
const TokenRequest = z.object({
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
});

/** GET /openapi.json */
export const openApiDocument = defineRoute({
  id: 'OpenApiDocument',
  api: 'main',
  method: 'GET',
  path: '/openapi.json',
  scope: null,
  request: { query: NoQuery },
  access: { storage: false },
  entry: 'functions/handlers/openapi.ts',
});

/** POST /token */
export const authToken = defineRoute({
  id: 'AuthToken',
  api: 'auth',
  method: 'POST',
  path: '/token',
  scope: null,
  request: { query: NoQuery, body: { kind: 'json', schema: TokenRequest, invalidDetail: 'The body must be {"username": "...", "password": "..."}.' } },
  // Locally the local issuer; on AWS Cognito InitiateAuth, an unauthenticated API: no permission at all.
  access: { storage: false, memorySize: 256 },
  entry: 'functions/handlers/auth-token.ts',
});

/** GET /.well-known/jwks.json */
export const authJwks = defineRoute({
  id: 'AuthJwks',
  api: 'auth',
  method: 'GET',
  path: '/.well-known/jwks.json',
  scope: null,
  request: { query: NoQuery },
  access: { storage: false },
  entry: 'functions/handlers/auth-jwks.ts',
});
