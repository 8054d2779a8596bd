import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENV } from '../../contract/environment.js';

/**
 * Attempts per SDK call (the first plus two retries, with the SDK's jittered back-off; throttling backs off longer).
 * With CONNECTION_TIMEOUT_MS this bounds a call to an endpoint that does not answer at a few seconds, after which the
 * error middleware answers 503 with Retry-After instead of holding the request until the gateway gives up.
 */
export const SDK_MAX_ATTEMPTS = 3;
/** How long an SDK call waits for a TCP connection, ms: a DynamoDB or S3 endpoint connects in milliseconds. */
export const CONNECTION_TIMEOUT_MS = 1_000;
/**
 * How long a DynamoDB call waits for the answer's headers, ms (then it fails with a TimeoutError and is retried): a
 * DynamoDB call answers in milliseconds, and a page is at most 1 MB. Not set on S3, whose uploads take as long as
 * their bodies need.
 */
export const DYNAMODB_REQUEST_TIMEOUT_MS = 5_000;

function dynamoDbConfig(endpoint?: string): DynamoDBClientConfig {
  return {
    maxAttempts: SDK_MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: DYNAMODB_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
    ...(endpoint === undefined
      ? {}
      : { endpoint, region: process.env[ENV.awsRegion] ?? 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  };
}

/**
 * A DynamoDB document client. With `endpoint` (DynamoDB Local) it uses fixed local credentials; without, the
 * Lambda role's credentials and region. Fails fast on an endpoint that does not answer (SDK_MAX_ATTEMPTS,
 * CONNECTION_TIMEOUT_MS, DYNAMODB_REQUEST_TIMEOUT_MS).
 */
export function createDocumentClient(endpoint?: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(dynamoDbConfig(endpoint)), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/** A plain DynamoDB client (for libraries that take one, e.g. Powertools idempotency), configured like createDocumentClient. */
export function createDynamoDbClient(endpoint?: string): DynamoDBClient {
  return new DynamoDBClient(dynamoDbConfig(endpoint));
}
