/**
 * The AWS token endpoint (functions/handlers/auth-cognito-token.ts) against a mocked Cognito: same request and
 * response contract as the local endpoint (functions/handlers/auth-token.ts), Cognito's refusals mapped to the same
 * 401/400 problem+json, the new-password challenge, password changes (which end the user's other sessions), refreshes
 * (400 invalid_grant when refused), throttling to 503; and the provider's revocation of refresh tokens (RevokeToken).
 */
import {
  ChangePasswordCommand,
  CognitoIdentityProviderClient,
  GlobalSignOutCommand,
  InitiateAuthCommand,
  InvalidParameterException,
  InvalidPasswordException,
  LimitExceededException,
  NotAuthorizedException,
  RespondToAuthChallengeCommand,
  RevokeTokenCommand,
  TooManyRequestsException,
  UnauthorizedException,
  UnsupportedTokenTypeException,
  UserNotFoundException,
} from '@aws-sdk/client-cognito-identity-provider';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CognitoSignIn, SIGN_OUT_SETTLE_MS } from '../../../functions/adapters/aws/cognito-sign-in.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { handler } from '../../../functions/handlers/auth-cognito-token.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  process.env.AWS_REGION = 'eu-west-1';
});

const cognito = mockClient(CognitoIdentityProviderClient);
const CLIENT_ID = 'test-app-client';

function event(body: string | undefined, contentType = 'application/json', path = '/token'): APIGatewayProxyEventV2 {
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': contentType },
    requestContext: {
      accountId: 'test',
      apiId: 'auth',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'request-1',
      routeKey: `POST ${path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
  };
}

const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'request-1', functionName: 'test' } as unknown as Context;

async function post(
  body: unknown,
  contentType = 'application/json',
  path = '/token',
): Promise<APIGatewayProxyStructuredResultV2 & { json: Record<string, unknown> }> {
  const response = (await handler(
    event(typeof body === 'string' ? body : JSON.stringify(body), contentType, path),
    context,
  )) as APIGatewayProxyStructuredResultV2;
  return { ...response, json: JSON.parse(response.body ?? '{}') as Record<string, unknown> };
}

const metadata = { $metadata: {}, message: 'refused' };

/** What Cognito answers a completed sign-in. */
const SIGNED_IN = {
  AuthenticationResult: { IdToken: 'id.token.jwt', AccessToken: 'access.token.jwt', ExpiresIn: 900, RefreshToken: 'refresh-token' },
};

/** What Cognito answers the sign-in with a new password, after a password change. */
const SIGNED_IN_AGAIN = {
  AuthenticationResult: {
    IdToken: 'second.id.jwt',
    AccessToken: 'second.access.jwt',
    ExpiresIn: 900,
    RefreshToken: 'second-refresh-token',
  },
};

/** The Cognito commands sent, in order. */
const sent = () => cognito.calls().map((call) => (call.args[0] as { constructor: { name: string } }).constructor.name);

beforeEach(() => {
  cognito.reset();
  process.env.COGNITO_CLIENT_ID = CLIENT_ID;
});
afterEach(() => {
  delete process.env.COGNITO_CLIENT_ID;
});

describe('POST /token on AWS (Cognito USER_PASSWORD_AUTH)', () => {
  it('returns the access token (not the ID token) with the local contract and signs in on the configured app client', async () => {
    cognito.on(InitiateAuthCommand).resolves(SIGNED_IN);
    const response = await post({ username: 'alice', password: 'Correct-horse-9' });
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(response.json).toEqual({
      access_token: 'access.token.jwt',
      token_type: 'Bearer',
      expires_in: 900,
      refresh_token: 'refresh-token',
    });
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

  it('answers 401 with the new_password_required challenge when an invited user signs in without a new password', async () => {
    cognito.on(InitiateAuthCommand).resolves({ ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: 'session-1' });
    const response = await post({ username: 'alice', password: 'Temporary-pass-1' });
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({ 'content-type': 'application/problem+json', 'WWW-Authenticate': 'Bearer' });
    expect(response.json).toMatchObject({
      type: 'https://device-scenario-service.dev/problems/new-password-required',
      status: 401,
      challenge: 'new_password_required',
      passwordPolicy: expect.stringMatching(/^at least 12 and at most 256 characters/),
    });
    expect(response.json.detail).toMatch(/new_password.*at least 12 and at most 256 characters/);
    expect(cognito.commandCalls(RespondToAuthChallengeCommand)).toHaveLength(0);
  });

  it('completes the challenge with the new password (RespondToAuthChallenge with its session) and answers the tokens', async () => {
    cognito
      .on(InitiateAuthCommand)
      .resolves({ ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: 'session-1', ChallengeParameters: { USER_ID_FOR_SRP: 'alice' } });
    cognito.on(RespondToAuthChallengeCommand).resolves(SIGNED_IN);
    const response = await post({ username: 'Alice', password: 'Temporary-pass-1', new_password: 'Fresh-start-2' });
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual({
      access_token: 'access.token.jwt',
      token_type: 'Bearer',
      expires_in: 900,
      refresh_token: 'refresh-token',
    });
    expect(cognito.commandCalls(RespondToAuthChallengeCommand)[0]?.args[0].input).toEqual({
      ClientId: CLIENT_ID,
      ChallengeName: 'NEW_PASSWORD_REQUIRED',
      Session: 'session-1',
      ChallengeResponses: { USERNAME: 'alice', NEW_PASSWORD: 'Fresh-start-2' },
    });
    expect(cognito.commandCalls(ChangePasswordCommand)).toHaveLength(0);
  });

  it('changes the password of a signed-in user who gives new_password without a challenge, ends their other sessions and answers a sign-in with the new password', async () => {
    cognito.on(InitiateAuthCommand).resolvesOnce(SIGNED_IN).resolvesOnce(SIGNED_IN_AGAIN);
    cognito.on(ChangePasswordCommand).resolves({});
    cognito.on(GlobalSignOutCommand).resolves({});
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual({
      access_token: 'second.access.jwt',
      token_type: 'Bearer',
      expires_in: 900,
      refresh_token: 'second-refresh-token',
    });
    // ChangePassword before GlobalSignOut, so that a session opened with the old password in between ends as well;
    // GlobalSignOut revokes the first sign-in's refresh token too, hence the second sign-in.
    expect(sent()).toEqual(['InitiateAuthCommand', 'ChangePasswordCommand', 'GlobalSignOutCommand', 'InitiateAuthCommand']);
    expect(cognito.commandCalls(ChangePasswordCommand)[0]?.args[0].input).toEqual({
      AccessToken: 'access.token.jwt',
      PreviousPassword: 'Correct-horse-9',
      ProposedPassword: 'Other-horse-10',
    });
    expect(cognito.commandCalls(GlobalSignOutCommand)[0]?.args[0].input).toEqual({ AccessToken: 'access.token.jwt' });
    expect(cognito.commandCalls(InitiateAuthCommand).map((call) => call.args[0].input)).toEqual([
      { ClientId: CLIENT_ID, AuthFlow: 'USER_PASSWORD_AUTH', AuthParameters: { USERNAME: 'alice', PASSWORD: 'Correct-horse-9' } },
      { ClientId: CLIENT_ID, AuthFlow: 'USER_PASSWORD_AUTH', AuthParameters: { USERNAME: 'alice', PASSWORD: 'Other-horse-10' } },
    ]);
  });

  it('answers 401 and neither signs out nor signs in again when Cognito refuses the password change', async () => {
    cognito.on(InitiateAuthCommand).resolves(SIGNED_IN).on(ChangePasswordCommand).rejects(new NotAuthorizedException(metadata));
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(401);
    expect(response.json).toMatchObject({ status: 401, detail: 'The username or password is wrong.' });
    expect(sent()).toEqual(['InitiateAuthCommand', 'ChangePasswordCommand']);
  });

  it('answers 503 with Retry-After, saying the password was changed, when Cognito throttles ending the other sessions', async () => {
    cognito.on(InitiateAuthCommand).resolves(SIGNED_IN);
    cognito.on(ChangePasswordCommand).resolves({});
    cognito.on(GlobalSignOutCommand).rejects(new TooManyRequestsException(metadata));
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('5');
    expect(response.json.detail).toMatch(/password was changed.*other sessions.*sign in with the new password/);
    expect(sent()).toEqual(['InitiateAuthCommand', 'ChangePasswordCommand', 'GlobalSignOutCommand']);
  });

  it('answers 503 with Retry-After, saying the password was changed, when Cognito throttles the sign-in with the new password', async () => {
    cognito.on(InitiateAuthCommand).resolvesOnce(SIGNED_IN).rejectsOnce(new TooManyRequestsException(metadata));
    cognito.on(ChangePasswordCommand).resolves({});
    cognito.on(GlobalSignOutCommand).resolves({});
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('5');
    expect(response.json.detail).toMatch(/password was changed.*sign in with the new password/);
  });

  it('answers 401 when the user is disabled while the password changes (Cognito refuses ending the sessions)', async () => {
    cognito.on(InitiateAuthCommand).resolves(SIGNED_IN);
    cognito.on(ChangePasswordCommand).resolves({});
    cognito.on(GlobalSignOutCommand).rejects(new NotAuthorizedException({ $metadata: {}, message: 'User is disabled.' }));
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(401);
    // Not "the password is wrong": the old one no longer works.
    expect(response.json.detail).toMatch(/^Your password was changed, but signing in with it was refused; sign in with the new password/);
    expect(sent()).toEqual(['InitiateAuthCommand', 'ChangePasswordCommand', 'GlobalSignOutCommand']);
  });

  it('signs in with the new password only SIGN_OUT_SETTLE_MS after the sign-out, past the second Cognito revokes by', async () => {
    cognito.on(InitiateAuthCommand).resolvesOnce(SIGNED_IN).resolvesOnce(SIGNED_IN_AGAIN);
    cognito.on(ChangePasswordCommand).resolves({});
    cognito.on(GlobalSignOutCommand).resolves({});
    const pauses: { ms: number; after: string[] }[] = [];
    const provider = new CognitoSignIn(
      new CognitoIdentityProviderClient({}),
      () => CLIENT_ID,
      { info: () => undefined },
      async (ms) => {
        pauses.push({ ms, after: sent() });
      },
    );
    const outcome = await provider.signIn({ username: 'alice', password: 'Correct-horse-9', newPassword: 'Other-horse-10' });
    expect(outcome).toMatchObject({ outcome: 'signed-in', tokens: { refreshToken: 'second-refresh-token' } });
    expect(pauses).toEqual([{ ms: SIGN_OUT_SETTLE_MS, after: ['InitiateAuthCommand', 'ChangePasswordCommand', 'GlobalSignOutCommand'] }]);
    expect(SIGN_OUT_SETTLE_MS).toBeGreaterThan(1_000);
  });

  it('answers 400 stating the policy, without calling Cognito, for a new password that does not meet it', async () => {
    const response = await post({ username: 'alice', password: 'Temporary-pass-1', new_password: 'short' });
    expect(response.statusCode).toBe(400);
    expect(response.json.detail).toMatch(
      /password policy: at least 12 and at most 256 characters.*lacks at least 12 characters, an uppercase letter, a digit, a symbol/,
    );
    expect(cognito.calls()).toHaveLength(0);
  });

  it.each([
    [
      'completing the challenge',
      () =>
        cognito
          .on(InitiateAuthCommand)
          .resolves({ ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: 's' })
          .on(RespondToAuthChallengeCommand)
          .rejects(new InvalidPasswordException(metadata)),
    ],
    [
      'changing the password',
      () => cognito.on(InitiateAuthCommand).resolves(SIGNED_IN).on(ChangePasswordCommand).rejects(new InvalidPasswordException(metadata)),
    ],
  ])('answers 400 stating the policy when the pool refuses the new password, %s', async (_case, arrange) => {
    arrange();
    const response = await post({ username: 'alice', password: 'Temporary-pass-1', new_password: 'Fresh-start-2' });
    expect(response.statusCode).toBe(400);
    expect(response.json).toMatchObject({ title: 'Bad Request', errors: [{ path: '/new_password' }] });
    expect(response.json.detail).toMatch(/does not meet the password policy: at least 12/);
  });

  it('answers 503 with Retry-After when Cognito throttles the password change', async () => {
    cognito.on(InitiateAuthCommand).resolves(SIGNED_IN).on(ChangePasswordCommand).rejects(new LimitExceededException(metadata));
    const response = await post({ username: 'alice', password: 'Correct-horse-9', new_password: 'Other-horse-10' });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('5');
  });

  it('answers 401, not a challenge it cannot complete, when Cognito asks for another challenge', async () => {
    cognito.on(InitiateAuthCommand).resolves({ ChallengeName: 'SMS_MFA', Session: 's' });
    const response = await post({ username: 'alice', password: 'Correct-horse-9' });
    expect(response.statusCode).toBe(401);
    expect(response.json).toMatchObject({ title: 'Unauthorized' });
    expect(response.json.detail).toContain('SMS_MFA');
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

describe('POST /token refresh on AWS (Cognito REFRESH_TOKEN_AUTH)', () => {
  it.each([
    ['form-encoded (RFC 6749 §6)', 'grant_type=refresh_token&refresh_token=refresh-token', 'application/x-www-form-urlencoded'],
    ['JSON', { grant_type: 'refresh_token', refresh_token: 'refresh-token' }, 'application/json'],
  ])('answers a new access token, without a new refresh token, for a refresh %s', async (_case, body, contentType) => {
    cognito.on(InitiateAuthCommand).resolves({ AuthenticationResult: { AccessToken: 'renewed.access.jwt', ExpiresIn: 900 } });
    const response = await post(body, contentType);
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual({ access_token: 'renewed.access.jwt', token_type: 'Bearer', expires_in: 900 });
    expect(cognito.commandCalls(InitiateAuthCommand)[0]?.args[0].input).toEqual({
      ClientId: CLIENT_ID,
      AuthFlow: 'REFRESH_TOKEN_AUTH',
      AuthParameters: { REFRESH_TOKEN: 'refresh-token' },
    });
  });

  it.each([
    ['a disabled user', 'User is disabled.'],
    ['a revoked refresh token', 'Refresh Token has been revoked'],
  ])('answers 400 invalid_grant for %s (Cognito NotAuthorizedException)', async (_case, message) => {
    cognito.on(InitiateAuthCommand).rejects(new NotAuthorizedException({ $metadata: {}, message }));
    const response = await post({ grant_type: 'refresh_token', refresh_token: 'refresh-token' });
    expect(response.statusCode).toBe(400);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(response.json).toMatchObject({ error: 'invalid_grant' });
    expect(String(response.json.error_description)).toMatch(/sign in again/);
  });

  it('answers 400 invalid_request for a refresh form without its refresh token, without calling Cognito', async () => {
    const response = await post('grant_type=refresh_token', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(400);
    expect(response.json).toMatchObject({ error: 'invalid_request' });
    expect(cognito.calls()).toHaveLength(0);
  });

  it('answers 503 with Retry-After when Cognito throttles the refresh', async () => {
    cognito.on(InitiateAuthCommand).rejects(new TooManyRequestsException(metadata));
    const response = await post({ grant_type: 'refresh_token', refresh_token: 'refresh-token' });
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe('5');
  });
});

describe('POST /revoke on AWS', () => {
  it('revokes a form-encoded refresh token with RevokeToken and answers 200 without a body, never cached', async () => {
    cognito.on(RevokeTokenCommand).resolves({});
    const answer = await post('token=refresh-token&token_type_hint=refresh_token', 'application/x-www-form-urlencoded', '/revoke');
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBeUndefined();
    expect(answer.headers?.['cache-control']).toBe('no-store');
    expect(sent()).toEqual(['RevokeTokenCommand']);
    expect(cognito.commandCalls(RevokeTokenCommand)[0]?.args[0].input).toEqual({ ClientId: CLIENT_ID, Token: 'refresh-token' });
  });

  it('answers 400 unsupported_token_type for an access token, and 503 with Retry-After when Cognito throttles', async () => {
    cognito.on(RevokeTokenCommand).rejects({ name: 'UnsupportedTokenTypeException', ...metadata });
    const access = await post({ token: 'access.token.jwt' }, 'application/json', '/revoke');
    expect(access.statusCode).toBe(400);
    expect(access.json).toMatchObject({ error: 'unsupported_token_type' });

    cognito.on(RevokeTokenCommand).rejects({ name: 'TooManyRequestsException', ...metadata });
    const throttled = await post({ token: 'refresh-token' }, 'application/json', '/revoke');
    expect(throttled.statusCode).toBe(503);
    expect(throttled.headers?.['Retry-After']).toBe('5');
  });
});

describe('CognitoSignIn.revoke (RFC 7009 on Cognito RevokeToken)', () => {
  /** The provider on the app client CLIENT_ID (read from process.env at each call, as the composition root does). */
  const provider = () =>
    new CognitoSignIn(new CognitoIdentityProviderClient({}), () => process.env.COGNITO_CLIENT_ID ?? '', {
      info: () => undefined,
    });

  it('revokes the refresh token with RevokeToken on the configured app client', async () => {
    cognito.on(RevokeTokenCommand).resolves({});
    process.env.COGNITO_CLIENT_ID = 'another-app-client';
    await expect(provider().revoke('refresh-token')).resolves.toBe('revoked');
    expect(cognito.commandCalls(RevokeTokenCommand).map((call) => call.args[0].input)).toEqual([
      { ClientId: 'another-app-client', Token: 'refresh-token' },
    ]);
  });

  it('answers unsupported for an access token (UnsupportedTokenTypeException)', async () => {
    cognito.on(RevokeTokenCommand).rejects(new UnsupportedTokenTypeException(metadata));
    await expect(provider().revoke('access.token.jwt')).resolves.toBe('unsupported');
  });

  it.each([
    ['not a refresh token of this app client (UnauthorizedException)', new UnauthorizedException(metadata)],
    ['a malformed token (InvalidParameterException)', new InvalidParameterException(metadata)],
    ['a token Cognito refuses (NotAuthorizedException)', new NotAuthorizedException(metadata)],
  ])('answers revoked, as RFC 7009 §2.2 says, for %s', async (_case, error) => {
    cognito.on(RevokeTokenCommand).rejects(error);
    await expect(provider().revoke('unknown-token')).resolves.toBe('revoked');
  });

  it('throws ServiceUnavailableError with a Retry-After when Cognito throttles', async () => {
    cognito.on(RevokeTokenCommand).rejects(new TooManyRequestsException(metadata));
    const thrown = await provider()
      .revoke('refresh-token')
      .catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ServiceUnavailableError);
    expect((thrown as ServiceUnavailableError).retryAfterSeconds).toBe(5);
  });

  it('rethrows any other Cognito failure as it is', async () => {
    const failure = new Error('ResourceNotFoundException: User pool client does not exist');
    cognito.on(RevokeTokenCommand).rejects(failure);
    await expect(provider().revoke('refresh-token')).rejects.toBe(failure);
  });
});
