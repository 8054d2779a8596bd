/**
 * Test helper: puts on an API Gateway v2 event the JWT authorizer context that API Gateway (on AWS) and the local
 * gateway give a handler once they have verified the caller's token, built from the token's claims by the same
 * function the local gateway uses (jwtAuthorizerContext), so that a test can invoke a handler as the gateway would.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { JWTPayload } from 'jose';
import { jwtAuthorizerContext } from '../../../functions/platform/auth.js';

/** `event` with `requestContext.authorizer.jwt` of a verified token carrying `claims` (`companies` an array, `scope` space-separated). */
export function withJwtAuthorizer<T extends APIGatewayProxyEventV2>(event: T, claims: JWTPayload): T {
  const jwt = jwtAuthorizerContext(claims);
  return {
    ...event,
    requestContext: {
      ...event.requestContext,
      authorizer: { jwt: { claims: { ...jwt.claims }, scopes: jwt.scopes === null ? null : [...jwt.scopes] } },
    },
  };
}
