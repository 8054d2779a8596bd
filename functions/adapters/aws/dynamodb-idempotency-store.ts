/**
 * Powertools idempotency records whose stored responses may exceed DynamoDB's 400 KB item limit (a 5,000-entry
 * deployment answer is several MB). The response is stored brotli-compressed in the record; when that is still too
 * large, the compressed bytes are split into chunk items of the same table, written before the record is marked
 * COMPLETED and reassembled on replay.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlib } from 'node:zlib';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { IdempotencyItemAlreadyExistsError } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** Most compressed bytes kept inside the record itself; larger responses go to chunk items. 256 KiB. */
export const INLINE_RESPONSE_BYTES = 256 * 1024;
/** Compressed bytes per chunk item (well under the 400 KB item limit with its key and attribute names). 256 KiB. */
export const RESPONSE_CHUNK_BYTES = 256 * 1024;

// The parent's attribute names (its defaults; the constructor does not let them change).
const KEY_ATTRIBUTE = 'id';
const DATA_ATTRIBUTE = 'data';
const EXPIRY_ATTRIBUTE = 'expiration';

/** A stored response that cannot be read back (a chunk missing or damaged): retrying does not help. */
export class StoredResponseUnreadableError extends Error {
  override readonly name = 'StoredResponseUnreadableError';
}

/** What the record's `data` attribute holds instead of the response (a plain response is read as is). */
type StoredResponse = { encoding: 'br'; json: Uint8Array } | { encoding: 'br'; chunks: number; bytes: number; sha256: string };

function isStoredResponse(value: unknown): value is StoredResponse {
  const candidate = value as { encoding?: unknown; json?: unknown; chunks?: unknown } | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.encoding === 'br' &&
    (candidate.json instanceof Uint8Array || typeof candidate.chunks === 'number')
  );
}

/** The id of chunk `index` of a record's response. Record keys end in a base64 hash (no '#'), so no record key looks like it. */
function chunkId(idempotencyKey: string, index: number): string {
  return `${idempotencyKey}#response-chunk#${index}`;
}

/** Options of CompressedDynamoDbPersistenceLayer. */
export interface CompressedDynamoDbPersistenceOptions {
  /** The idempotency table (partition key `id`, TTL attribute `expiration`). */
  tableName: string;
  client: DynamoDBClient;
  /** Compressed bytes kept in the record before chunking. @default INLINE_RESPONSE_BYTES */
  inlineBytes?: number;
  /** Compressed bytes per chunk item. @default RESPONSE_CHUNK_BYTES */
  chunkBytes?: number;
}

/**
 * Powertools' DynamoDB persistence layer storing responses of any size: brotli-compressed in the record up to
 * `inlineBytes`, beyond that in chunk items `<record id>#response-chunk#<n>` (each `chunkBytes` at most, expiring
 * with the record). Chunks are written before the record turns COMPLETED, so a replay that sees COMPLETED finds
 * them; a chunk that is missing or does not match the recorded SHA-256 makes the read throw
 * StoredResponseUnreadableError. Records written by the plain layer (uncompressed response) are still read.
 */
export class CompressedDynamoDbPersistenceLayer extends DynamoDBPersistenceLayer {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #inlineBytes: number;
  readonly #chunkBytes: number;

  constructor(options: CompressedDynamoDbPersistenceOptions) {
    super({ tableName: options.tableName, awsSdkV3Client: options.client });
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#inlineBytes = options.inlineBytes ?? INLINE_RESPONSE_BYTES;
    this.#chunkBytes = options.chunkBytes ?? RESPONSE_CHUNK_BYTES;
  }

  protected override async _updateRecord(record: IdempotencyRecord): Promise<void> {
    if (record.responseData === undefined) return super._updateRecord(record);
    const stored = await this.#store(record.idempotencyKey, record.responseData, record.expiryTimestamp);
    return super._updateRecord(
      new IdempotencyRecord({
        idempotencyKey: record.idempotencyKey,
        status: record.getStatus(),
        expiryTimestamp: record.expiryTimestamp,
        inProgressExpiryTimestamp: record.inProgressExpiryTimestamp,
        payloadHash: record.payloadHash,
        responseData: stored as unknown as JSONValue,
      }),
    );
  }

  protected override async _getRecord(idempotencyKey: string): Promise<IdempotencyRecord> {
    const record = await super._getRecord(idempotencyKey);
    record.responseData = await this.#load(idempotencyKey, record.responseData);
    return record;
  }

  protected override async _putRecord(record: IdempotencyRecord): Promise<void> {
    try {
      await super._putRecord(record);
    } catch (error) {
      // The refused put returns the existing record (ALL_OLD), which Powertools replays without another read.
      const existing = error instanceof IdempotencyItemAlreadyExistsError ? error.existingRecord : undefined;
      if (existing !== undefined) existing.responseData = await this.#load(existing.idempotencyKey, existing.responseData);
      throw error;
    }
  }

  /** Compresses the response and writes the chunk items it needs; returns what the record keeps. */
  async #store(idempotencyKey: string, response: unknown, expiryTimestamp: number | undefined): Promise<StoredResponse> {
    const text = JSON.stringify(response);
    const packed = new Uint8Array(
      await compress(text, {
        params: {
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_QUALITY]: 5,
          [zlib.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text),
        },
      }),
    );
    if (packed.byteLength <= this.#inlineBytes) return { encoding: 'br', json: packed };
    const chunks = Math.ceil(packed.byteLength / this.#chunkBytes);
    await Promise.all(
      Array.from({ length: chunks }, (_, index) =>
        this.#client.send(
          new PutItemCommand({
            TableName: this.#tableName,
            Item: {
              [KEY_ATTRIBUTE]: { S: chunkId(idempotencyKey, index) },
              [DATA_ATTRIBUTE]: { B: packed.subarray(index * this.#chunkBytes, (index + 1) * this.#chunkBytes) },
              ...(expiryTimestamp === undefined ? {} : { [EXPIRY_ATTRIBUTE]: { N: String(expiryTimestamp) } }),
            },
          }),
        ),
      ),
    );
    return { encoding: 'br', chunks, bytes: packed.byteLength, sha256: createHash('sha256').update(packed).digest('hex') };
  }

  /** The response a record's `data` attribute stands for (reading its chunks when it has some). */
  async #load(idempotencyKey: string, data: JSONValue): Promise<JSONValue> {
    if (!isStoredResponse(data)) return data;
    const stored = data as unknown as StoredResponse;
    let packed: Uint8Array;
    if ('json' in stored) {
      packed = stored.json;
    } else {
      const parts = await Promise.all(
        Array.from({ length: stored.chunks }, async (_, index) => {
          const { Item } = await this.#client.send(
            new GetItemCommand({
              TableName: this.#tableName,
              Key: { [KEY_ATTRIBUTE]: { S: chunkId(idempotencyKey, index) } },
              ConsistentRead: true,
            }),
          );
          const bytes = Item?.[DATA_ATTRIBUTE]?.B;
          if (bytes === undefined)
            throw new StoredResponseUnreadableError(
              `Chunk ${index + 1} of ${stored.chunks} of the stored response of idempotency record ${idempotencyKey} is missing.`,
            );
          return bytes;
        }),
      );
      packed = Buffer.concat(parts);
      const sha256 = createHash('sha256').update(packed).digest('hex');
      if (packed.byteLength !== stored.bytes || sha256 !== stored.sha256) {
        throw new StoredResponseUnreadableError(
          `The stored response of idempotency record ${idempotencyKey} does not match its recorded size and SHA-256.`,
        );
      }
    }
    return JSON.parse((await decompress(packed)).toString('utf8')) as JSONValue;
  }
}
