/** Minimal typings for s3rver 3 (it ships none): the parts the local runtime uses. */
declare module 's3rver' {
  import type { EventEmitter } from 'node:events';

  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  /** The event s3rver emits after an object is written (a subset of the S3 notification record). */
  interface S3rverEvent {
    Records: {
      eventName: string;
      eventTime: string;
      s3: { bucket: { name: string }; object: { key: string; size: number; eTag: string; sequencer: string } };
    }[];
  }

  export default class S3rver extends EventEmitter {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    on(event: 'event', listener: (event: S3rverEvent) => void): this;
  }
}
