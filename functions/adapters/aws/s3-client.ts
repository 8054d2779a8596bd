/** The S3 client of the archive store, apart from clients.ts so that functions without archives never load the S3 SDK. */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ENV } from '../../contract/environment.js';
import { CONNECTION_TIMEOUT_MS, SDK_MAX_ATTEMPTS } from './clients.js';

/**
 * An S3 client. Checksums only when an operation requires them: with the SDK's default (`WHEN_SUPPORTED`) a presigned
 * PUT URL carries `x-amz-checksum-crc32` of an empty body, which S3 then compares with the uploaded archive and
 * refuses; s3rver also predates the default CRC trailers. With `endpoint` (s3rver) it uses path-style addressing and
 * s3rver's credentials. Fails fast on an endpoint that does not accept connections (SDK_MAX_ATTEMPTS,
 * CONNECTION_TIMEOUT_MS).
 */
export function createS3Client(endpoint?: string): S3Client {
  const config: S3ClientConfig = {
    maxAttempts: SDK_MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  return new S3Client(
    endpoint === undefined
      ? config
      : {
          ...config,
          endpoint,
          forcePathStyle: true,
          region: process.env[ENV.awsRegion] ?? 'us-east-1',
          credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
        },
  );
}
