/**
 * The presigned URLs the archive store gives browsers and the CLI on AWS: a PUT URL must not carry a checksum of its
 * own (the SDK's default would sign `x-amz-checksum-crc32` of an empty body, and S3 would refuse every real archive).
 */
import { describe, expect, it } from 'vitest';
import { S3ArchiveStore } from '../../../functions/adapters/aws/s3-archive-store.js';
import { createS3Client } from '../../../functions/adapters/aws/s3-client.js';

describe('presigned archive URLs on AWS', () => {
  process.env.AWS_REGION ??= 'eu-west-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'AKIAEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'example-secret';
  const store = new S3ArchiveStore(createS3Client(), 'archive-bucket-example');

  it('signs a PUT with no checksum parameter, virtual-hosted on the regional endpoint', async () => {
    const url = new URL(await store.presignPut('uploads/acme/slot.zip', 'application/zip', 300));
    expect(url.host).toBe(`archive-bucket-example.s3.${process.env.AWS_REGION}.amazonaws.com`);
    const names = [...url.searchParams.keys()].map((name) => name.toLowerCase());
    expect(names).toContain('x-amz-signature');
    expect(names.filter((name) => name.includes('checksum'))).toEqual([]);
  });
});
