/**
 * The archive store of the composition root (S3, or s3rver locally): only the functions that read or write archives
 * import this module, so only they load the S3 SDK.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { S3ArchiveStore } from '../../adapters/aws/s3-archive-store.js';
import { createS3Client } from '../../adapters/aws/s3-client.js';
import type { ArchiveStore } from '../../core/scenarios/ports.js';
import { storageConfig } from '../config.js';
import { traced } from '../observability.js';
import { problemOf } from '../problem.js';
import { type StorageServices, storage } from './storage.js';

let built: { s3: S3Client; archives: ArchiveStore } | undefined;

/**
 * The traced S3 client (S3_ENDPOINT locally) and the archive store on ARCHIVE_BUCKET, built once.
 * @throws EnvironmentError naming every missing or malformed storage variable.
 */
export function archiveStorage(): { s3: S3Client; archives: ArchiveStore } {
  if (built === undefined) {
    const config = storageConfig();
    const s3 = traced(createS3Client(config.s3Endpoint));
    built = { s3, archives: new S3ArchiveStore(s3, config.archiveBucket) };
  }
  return built;
}

/**
 * What the upload use cases take (the presigned slots, the archive validation, the upload sweeper): the tables'
 * repositories, the archive store, and how a rejected slot's problem body is shaped (platform/problem.ts).
 * @throws EnvironmentError naming every missing or malformed storage variable.
 */
export function uploadStorage(): StorageServices & { s3: S3Client; archives: ArchiveStore; problemOf: typeof problemOf } {
  return { ...storage(), ...archiveStorage(), problemOf };
}
