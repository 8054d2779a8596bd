/**
 * The AWS token endpoint (functions/handlers/auth-cognito-token.ts) against a mocked Cognito: same request and
 * response contract as the local endpoint (functions/handlers/auth-token.ts), Cognito's refusals mapped to the same
 * 401/400 problem+json, throttling to 503.
 */
import {
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
  InvalidParameterException,
  NotAuthorizedException,
  TooManyRequestsException,
  UserNotFoundException,
} from '@aws-sdk/client-cognito-identity-provider';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../../functions/handlers/auth-cognito-token.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.AWS_REGION = 'eu-west-1';
});

const cognito = mockClient(CognitoIdentityProviderClient);
const CLIENT_ID = 'test-app-client';

function event(body: string | undefined, contentType = 'application/json'): APIGatewayProxyEventV2 {
  const now = new Date();
  return {
    version: '2.0',
    routeKey: 'POST /token',
    rawPath: '/token',
    rawQueryString: '',
    headers: { 'content-type': contentType },
    requestContext: {
      accountId: 'test',
      apiId: 'auth',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: '/token', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'request-1',
      routeKey: 'POST /token',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
  };
}

const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'request-1', functionName: 'test' } as unknown as Context;

async function post(body: unknown): Promise<APIGatewayProxyStructuredResultV2 & { json: Record<string, unknown> }> {
  const response = (await handler(
    event(typeof body === 'string' ? body : JSON.stringify(body)),
    context,
  )) as APIGatewayProxyStructuredResultV2;
  return { ...response, json: JSON.parse(response.body ?? '{}') as Record<string, unknown> };
}

const metadata = { $metadata: {}, message: 'refused' };

beforeEach(() => {
  cognito.reset();
  process.env.COGNITO_CLIENT_ID = CLIENT_ID;
});
afterEach(() => {
  delete process.env.COGNITO_CLIENT_ID;
});

describe('POST /token on AWS (Cognito USER_PASSWORD_AUTH)', () => {
  it('returns the access token (not the ID token) with the local contract and signs in on the configured app client', async () => {
    cognito
      .on(InitiateAuthCommand)
      .resolves({ AuthenticationResult: { IdToken: 'id.token.jwt', AccessToken: 'access.token.jwt', ExpiresIn: 3600 } });
    const response = await post({ username: 'alice', password: 'Correct-horse-9' });
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(response.json).toEqual({ access_token: 'access.token.jwt', token_type: 'Bearer', expires_in: 3600 });
    expect(cognito.commandCalls(InitiateAuthCommand)[0]?.args[0].input).toEqual({
      ClientId: CLIENT_ID,
      AuthFlow: 'USER_PASSWORD_AUTH',
      AuthParameters: { USERNAME: 'alice', PASSWORD: 'Correct-horse-9' },
    });
  });

  it.each([
    ['a wrong password', new NotAuthorizedException(metadata)],
    ['an unknown user', new UserNotFoundException(metadata)],
  ])('answers 401 problem+json with WWW-Authenticate for %s, without telling which', async (_case, error) => {
    cognito.on(InitiateAuthCommand).rejects(error);
    const response = await post({ username: 'alice', password: 'wrong' });
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({ 'content-type': 'application/problem+json', 'WWW-Authenticate': 'Bearer' });
    expect(response.json).toMatchObject({ status: 401, title: 'Unauthorized', detail: 'The username or password is wrong.' });
  });

  it('answers 401 naming the challenge when the user has no permanent password yet', async () => {
    cognito.on(InitiateAuthCommand).resolves({ ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: 'session' });
    const response = await post({ username: 'alice', password: 'Temporary-pass-1' });
    expect(response.statusCode).toBe(401);
    expect(response.json.detail).toMatch(/NEW_PASSWORD_REQUIRED.*admin-set-user-password --permanent/);
  });

  it('answers 400 for a malformed body without calling Cognito, as the local endpoint does', async () => {
    for (const body of ['{not json', { username: 'alice' }, { username: '', password: 'x' }]) {
      const response = await post(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.headers?.['content-type']).toBe('application/problem+json');
    }
    const wrongType = (await handler(
      event('username=alice', 'application/x-www-form-urlencoded'),
      context,
    )) as APIGatewayProxyStructuredResultV2;
    expect(wrongType.statusCode).toBe(400);
    expect(cognito.commandCalls(InitiateAuthCommand)).toHaveLength(0);
  });

  it('answers 400 when Cognito refuses the parameters', async () => {
    cognito.on(InitiateAuthCommand).rejects(new InvalidParameterException({ ...metadata, message: 'Invalid username' }));
    const response = await post({ username: 'a'.repeat(200), password: 'x' });
    expect(response.statusCode).toBe(400);
    expect(response.json.detail).toContain('Invalid username');
  });

  it('answers 503 with Retry-After when Cognito throttles', async () => {
    cognito.on(InitiateAuthCommand).rejects(new TooManyRequestsException(metadata));
    const response = await post({ username: 'alice', password: 'x' });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('5');
  });

  it('answers a generic 500 for an unexpected Cognito failure and never shows it', async () => {
    cognito.on(InitiateAuthCommand).rejects(new Error('ResourceNotFoundException: User pool client does not exist'));
    const response = await post({ username: 'alice', password: 'x' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('User pool client');
  });
});
