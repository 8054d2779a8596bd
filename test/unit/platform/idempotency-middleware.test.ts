/**
 * The Idempotency-Key middleware with DynamoDB simulated by aws-sdk-client-mock: a response that cannot be stored is
 * still returned, requests without a key never touch the idempotency table, malformed keys are refused first.
 */

import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  DynamoDBServiceException,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { CompressedDynamoDbPersistenceLayer } from '../../../functions/adapters/aws/dynamodb-idempotency-store.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { idempotencyWhenKeyed } from '../../../functions/platform/idempotency.js';
import { problemJsonErrors } from '../../../functions/platform/problem.js';

const dynamoDb = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const mock = mockClient(dynamoDb);
afterEach(() => mock.reset());

const context = { getRemainingTimeInMillis: () => 30_000, functionName: 'deployments-execute' } as unknown as Context;
const event = (headers: Record<string, string>): APIGatewayProxyEventV2 =>
  ({
    rawPath: '/companies/acme/resources/deployments',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...headers },
    pathParameters: { companyId: 'acme' },
    body: '{"requests":[]}',
    isBase64Encoded: false,
  }) as unknown as APIGatewayProxyEventV2;

/** A handler behind the middleware (with a fresh store, as each Lambda container has), counting its executions. */
function keyedHandler(fails = false) {
  let executions = 0;
  const config = new IdempotencyConfig({
    eventKeyJmesPath: '[pathParameters.companyId, headers."idempotency-key"]',
    throwOnNoIdempotencyKey: true,
  });
  const store = new CompressedDynamoDbPersistenceLayer({ tableName: 'idempotency', client: dynamoDb });
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(problemJsonErrors())
    .use(httpHeaderNormalizer())
    .use(idempotencyWhenKeyed({ store: () => store, config }))
    .handler(async () => {
      executions += 1;
      if (fails) throw new BadRequestError('The request body is not valid.');
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ executed: executions }) };
    });
  return { handler: (headers: Record<string, string>) => handler(event(headers), context), executions: () => executions };
}

describe('idempotencyWhenKeyed', () => {
  it('returns the real response when storing it fails after the changes were made, and removes the record so a retry executes', async () => {
    mock.on(PutItemCommand).resolves({});
    mock.on(UpdateItemCommand).rejects(
      new DynamoDBServiceException({
        name: 'ValidationException',
        $fault: 'client',
        $metadata: {},
        message: 'Item size has exceeded the maximum allowed size',
      }),
    );
    mock.on(DeleteItemCommand).resolves({});
    const { handler, executions } = keyedHandler();
    const response = await handler({ 'Idempotency-Key': 'too-large' });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body!)).toEqual({ executed: 1 });
    expect(executions()).toBe(1);
    expect(mock.commandCalls(DeleteItemCommand)).toHaveLength(1);
    const recordId = mock.commandCalls(PutItemCommand)[0]!.args[0].input.Item!.id;
    expect(mock.commandCalls(DeleteItemCommand)[0]!.args[0].input.Key).toEqual({ id: recordId });
  });

  it('answers 503 with Retry-After, executing nothing, when the idempotency table cannot be reached', async () => {
    mock
      .on(PutItemCommand)
      .rejects(new DynamoDBServiceException({ name: 'InternalServerError', $fault: 'server', $metadata: {}, message: 'unavailable' }));
    const { handler, executions } = keyedHandler();
    const response = await handler({ 'Idempotency-Key': 'store-down' });
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'content-type': 'application/problem+json', 'Retry-After': expect.any(String) });
    expect(JSON.parse(response.body!).detail).toContain('nothing was changed');
    expect(executions()).toBe(0);
  });

  it("answers the handler's own error when its in-progress record cannot be removed", async () => {
    mock.on(PutItemCommand).resolves({});
    mock
      .on(DeleteItemCommand)
      .rejects(new DynamoDBServiceException({ name: 'InternalServerError', $fault: 'server', $metadata: {}, message: 'unavailable' }));
    const { handler } = keyedHandler(true);
    const response = await handler({ 'Idempotency-Key': 'handler-fails' });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body!).detail).toBe('The request body is not valid.');
    expect(mock.commandCalls(DeleteItemCommand)).toHaveLength(1);
  });

  it('answers 409 to a retry while the first request runs, and leaves its record so the next retry gets its response', async () => {
    const { handler, executions } = keyedHandler();
    mock.on(PutItemCommand).rejects(
      new ConditionalCheckFailedException({
        $metadata: {},
        message: 'The conditional request failed',
        Item: marshall({
          id: 'deployments-execute#held',
          expiration: Math.floor(Date.now() / 1000) + 3600,
          status: 'INPROGRESS',
          in_progress_expiration: Date.now() + 25_000,
        }),
      }),
    );
    const response = await handler({ 'Idempotency-Key': 'held' });
    expect(response.statusCode).toBe(409);
    expect(executions()).toBe(0);
    expect(mock.commandCalls(DeleteItemCommand)).toHaveLength(0);
  });

  it('does not touch the idempotency table for a request without the header', async () => {
    const { handler, executions } = keyedHandler();
    expect((await handler({})).statusCode).toBe(200);
    expect(executions()).toBe(1);
    expect(mock.calls()).toHaveLength(0);
  });

  it('refuses an empty, blank or 256-character key with 400 naming the header, before executing or storing anything', async () => {
    const { handler, executions } = keyedHandler();
    for (const key of ['', '   ', 'k'.repeat(256)]) {
      const response = await handler({ 'Idempotency-Key': key });
      expect(response.statusCode).toBe(400);
      expect(JSON.parse(response.body!).errors).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(executions()).toBe(0);
    expect(mock.calls()).toHaveLength(0);
  });
});
