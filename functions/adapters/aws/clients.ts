import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * A DynamoDB document client. With `endpoint` (DynamoDB Local) it uses fixed local credentials; without, the
 * Lambda role's credentials and region.
 */
export function createDocumentClient(endpoint?: string): DynamoDBDocumentClient {
  const client = new DynamoDBClient(
    endpoint === undefined
      ? {}
      : { endpoint, region: process.env.AWS_REGION ?? 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
  );
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
}

/**
 * An S3 client. With `endpoint` (s3rver) it uses path-style addressing, s3rver's credentials, and checksums only
 * when required (s3rver predates the SDK's default CRC trailers).
 */
export function createS3Client(endpoint?: string): S3Client {
  return new S3Client(
    endpoint === undefined
      ? {}
      : {
          endpoint,
          forcePathStyle: true,
          region: process.env.AWS_REGION ?? 'us-east-1',
          credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        },
  );
}

/** A plain DynamoDB client (for libraries that take one, e.g. Powertools idempotency), configured like createDocumentClient. */
export function createDynamoDbClient(endpoint?: string): DynamoDBClient {
  return new DynamoDBClient(
    endpoint === undefined
      ? {}
      : { endpoint, region: process.env.AWS_REGION ?? 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } },
  );
}
