import type { S3Event, S3EventRecord } from 'aws-lambda';

/**
 * Encodes an object key the way S3 event notifications carry it: URL-encoded, with `+` for spaces and `/` kept.
 * Handlers decode with `decodeURIComponent(key.replace(/\+/g, ' '))`.
 */
export function encodeS3EventKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%20/g, '+'))
    .join('/');
}

/** The subset of s3rver's `event` record that the runtime reads. */
export interface S3rverRecord {
  eventName: string;
  eventTime: string;
  s3: { bucket: { name: string }; object: { key: string; size: number; eTag: string; sequencer: string } };
}

/** Builds the Lambda `S3Event` (one record) that an S3 ObjectCreated notification would deliver. */
export function toS3Event(record: S3rverRecord, region: string): S3Event {
  const s3Record: S3EventRecord = {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: region,
    eventTime: record.eventTime,
    eventName: record.eventName.replace(/^ObjectCreated:/, 'ObjectCreated:') as S3EventRecord['eventName'],
    userIdentity: { principalId: 'local' },
    requestParameters: { sourceIPAddress: '127.0.0.1' },
    responseElements: { 'x-amz-request-id': record.s3.object.sequencer, 'x-amz-id-2': record.s3.object.sequencer },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'archive-uploaded',
      bucket: { name: record.s3.bucket.name, ownerIdentity: { principalId: 'local' }, arn: `arn:aws:s3:::${record.s3.bucket.name}` },
      object: {
        key: encodeS3EventKey(record.s3.object.key),
        size: record.s3.object.size,
        eTag: record.s3.object.eTag,
        sequencer: record.s3.object.sequencer,
      },
    },
  };
  return { Records: [s3Record] };
}
