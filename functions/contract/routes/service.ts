/** Public routes: the OpenAPI document (main address), token issuance and key set (authentication address). */
import { defineRoute } from '../route.js';

/** GET /openapi.json */
export const openApiDocument = defineRoute({
  id: 'OpenApiDocument',
  api: 'main',
  method: 'GET',
  path: '/openapi.json',
  scope: null,
  entry: 'functions/handlers/openapi.ts',
});

/** POST /token */
export const authToken = defineRoute({
  id: 'AuthToken',
  api: 'auth',
  method: 'POST',
  path: '/token',
  scope: null,
  entry: 'functions/handlers/auth-token.ts',
});

/** GET /.well-known/jwks.json */
export const authJwks = defineRoute({
  id: 'AuthJwks',
  api: 'auth',
  method: 'GET',
  path: '/.well-known/jwks.json',
  scope: null,
  entry: 'functions/handlers/auth-jwks.ts',
});
