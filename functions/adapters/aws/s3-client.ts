/** The S3 client of the archive store, apart from clients.ts so that functions without archives never load the S3 SDK. */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ENV } from '../../contract/environment.js';
import { CONNECTION_TIMEOUT_MS, SDK_MAX_ATTEMPTS } from './clients.js';

/**
 * An S3 client. With `endpoint` (s3rver) it uses path-style addressing, s3rver's credentials, and checksums only
 * when required (s3rver predates the SDK's default CRC trailers). Fails fast on an endpoint that does not accept
 * connections (SDK_MAX_ATTEMPTS, CONNECTION_TIMEOUT_MS).
 */
export function createS3Client(endpoint?: string): S3Client {
  const config: S3ClientConfig = { maxAttempts: SDK_MAX_ATTEMPTS, requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS } };
  return new S3Client(
    endpoint === undefined
      ? config
      : {
          ...config,
          endpoint,
          forcePathStyle: true,
          region: process.env[ENV.awsRegion] ?? 'us-east-1',
          credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        },
  );
}
