import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { UnauthorizedError } from '../core/shared/errors.js';
import { tokenFailureReason, verifyBearerToken } from '../platform/auth.js';
import { awsBearerTrust } from '../platform/composition/bearer-trust.js';
import { logger } from '../platform/logger.js';
import { eventHandler, recordAuthorizerFailure } from '../platform/observability.js';

/** What the authorizer hands the route's function in `requestContext.authorizer.lambda`: the token's claims as text. */
export type BearerAuthorizerContext = Readonly<Record<string, string>>;

/**
 * AWS only: the Lambda REQUEST authorizer (payload 2.0, simple responses) of the main and upload APIs' user routes.
 * Accepts a bearer token of either trusted issuer (awsBearerTrust: a user's Cognito access token, an API client's or a
 * device's token from the device issuer) and hands the function its claims, flattened as API Gateway's JWT authorizer
 * does (functions/platform/auth.ts); the function then reads the caller from them and checks the route's scope and
 * company before anything else (bearerAuthentication, authorization). API Gateway caches an answer per Authorization
 * header (functions/contract/functions.ts), so the function also refuses an expired token itself.
 * A refused token throws `Unauthorized`, which API Gateway answers 401 without invoking the route.
 * @throws Error('Unauthorized') for a missing, malformed, expired or untrusted token.
 * @throws ServiceUnavailableError when an issuer's keys cannot be read (API Gateway answers 500; the caller retries).
 */
export const handler = eventHandler<
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult<BearerAuthorizerContext>
>().handler(async (event) => {
  try {
    const verified = await verifyBearerToken(event.headers?.authorization, awsBearerTrust());
    return { isAuthorized: true, context: verified.jwt.claims as BearerAuthorizerContext };
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) {
      recordAuthorizerFailure();
      throw error;
    }
    logger.info('Bearer token refused', { reason: tokenFailureReason(error) ?? 'invalid', detail: error.message });
    // The one error API Gateway turns into 401 (any other is a 500).
    throw new Error('Unauthorized');
  }
});
