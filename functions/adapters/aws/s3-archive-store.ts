import { PassThrough, type Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ArchiveStore, RandomAccessSource } from '../../core/scenarios/ports.js';

/** ArchiveStore on one S3 bucket (s3rver locally). Objects are encrypted at rest by the bucket's default encryption. */
export class S3ArchiveStore implements ArchiveStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  /** @inheritdoc */
  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }),
    );
  }

  /** @inheritdoc */
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const object = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return object.Body === undefined ? undefined : await object.Body.transformToByteArray();
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  /** @inheritdoc */
  async openRandomAccess(key: string): Promise<RandomAccessSource | undefined> {
    let size: number;
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      size = head.ContentLength ?? 0;
    } catch (error) {
      if (
        error instanceof NotFound ||
        (error as { name?: string }).name === 'NotFound' ||
        (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
      )
        return undefined;
      throw error;
    }
    return {
      size,
      createReadStream: (start: number, end: number) => {
        const output = new PassThrough();
        if (end <= start) {
          output.end();
          return output;
        }
        this.s3
          .send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}` }))
          .then((object) => {
            const body = object.Body as Readable | undefined;
            if (body === undefined) throw new Error(`S3 returned no body for ${key}.`);
            body.on('error', (error) => output.destroy(error));
            body.pipe(output);
          })
          .catch((error: unknown) => output.destroy(error as Error));
        return output;
      },
    };
  }

  /** @inheritdoc */
  async stat(key: string): Promise<{ size: number; lastModified: string } | undefined> {
    try {
      const head = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, lastModified: (head.LastModified ?? new Date()).toISOString() };
    } catch (error) {
      if (
        error instanceof NotFound ||
        (error as { name?: string }).name === 'NotFound' ||
        (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
      )
        return undefined;
      throw error;
    }
  }

  /** @inheritdoc */
  async copy(sourceKey: string, targetKey: string): Promise<void> {
    await this.s3.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: targetKey,
        CopySource: `${this.bucket}/${sourceKey.split('/').map(encodeURIComponent).join('/')}`,
      }),
    );
  }

  /** @inheritdoc */
  presignGet(key: string, expiresInSeconds: number, filename: string): Promise<string> {
    return getSignedUrl(
      this.s3,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ResponseContentDisposition: `attachment; filename="${filename.replace(/["\\]/g, '_')}"`,
      }),
      { expiresIn: expiresInSeconds },
    );
  }

  /** @inheritdoc */
  presignPut(key: string, contentType: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.s3, new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }), {
      expiresIn: expiresInSeconds,
    });
  }

  /** @inheritdoc */
  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
