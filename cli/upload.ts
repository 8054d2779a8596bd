/**
 * Sending a scenario archive (`dss upload`): archives up to MAX_DIRECT_UPLOAD_BYTES as a multipart POST to the upload
 * address, larger ones through a presigned upload slot (request the slot, PUT the bytes, poll the outcome), with the
 * bytes counted as they are sent for a progress bar (docs/contract.md, "Scenario packages").
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ApiError, type components, type DssClient, expectOk } from '../client/index.js';
import { MAX_DIRECT_UPLOAD_BYTES } from '../functions/contract/archives.js';
import { MAX_ARCHIVE_BYTES } from '../functions/core/scenarios/upload.js';
import { CommandFailed, formatBytes, note, startProgress, UsageError, visible } from './output.js';

export type StoredScenario = components['schemas']['StoredScenario'];
export type UploadSlotStatus = components['schemas']['UploadSlotStatus'];

/** Size of the pieces a body is streamed in, bytes: the progress moves at least every this many bytes. */
const CHUNK_BYTES = 64 * 1024;

/** An archive ready to send: its file name in the form, its size, and its bytes (read again for each attempt). */
export interface ArchiveSource {
  /** File name sent with the multipart part, e.g. `lobby.zip`. */
  filename: string;
  /** Bytes. */
  size: number;
  /** The whole archive in memory, or undefined when it is streamed from `path`. */
  bytes?: Uint8Array;
  /** The .zip file streamed from disk (archives above MAX_DIRECT_UPLOAD_BYTES are not read into memory). */
  path?: string;
}

/**
 * A .zip file as an ArchiveSource: read into memory when small enough for a direct upload, else streamed when sent.
 * @throws UsageError when it is missing, empty, or above MAX_ARCHIVE_BYTES (5 GiB, the largest archive the service stores)
 */
export async function archiveFile(path: string): Promise<ArchiveSource> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined || !info.isFile()) throw new UsageError(`Cannot read ${path}: no such file.`);
  if (info.size === 0) throw new UsageError(`${path} is empty.`);
  if (info.size > MAX_ARCHIVE_BYTES) {
    throw new UsageError(`${path} is ${formatBytes(info.size)}; the service stores archives of at most ${formatBytes(MAX_ARCHIVE_BYTES)}.`);
  }
  const filename = basename(path);
  return info.size <= MAX_DIRECT_UPLOAD_BYTES
    ? { filename, size: info.size, bytes: await readFile(path) }
    : { filename, size: info.size, path };
}

/** The pieces of an archive: its bytes cut into CHUNK_BYTES, or its file read in pieces of that size. */
async function* piecesOf(source: ArchiveSource): AsyncGenerator<Uint8Array> {
  if (source.bytes !== undefined) {
    for (let offset = 0; offset < source.bytes.byteLength; offset += CHUNK_BYTES) yield source.bytes.subarray(offset, offset + CHUNK_BYTES);
    return;
  }
  if (source.path === undefined) return;
  for await (const chunk of createReadStream(source.path, { highWaterMark: CHUNK_BYTES })) yield chunk as Buffer;
}

/**
 * A request body that reports how many bytes were taken from it: fetch pulls a piece when it can send it, so the
 * count follows the upload (give the request `duplex: 'half'`, as fetch requires for a stream body).
 * @param onBytes called with the running total after each piece
 */
export function countingBody(pieces: AsyncIterable<Uint8Array>, onBytes: (sent: number) => void): ReadableStream<Uint8Array> {
  const iterator = pieces[Symbol.asyncIterator]();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done === true) {
        controller.close();
        return;
      }
      sent += next.value.byteLength;
      controller.enqueue(next.value);
      onBytes(sent);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/**
 * The multipart/form-data body of a direct upload: one file part `payload` holding the archive (RFC 7578).
 * @returns the body and its content type (with the boundary)
 */
export function multipartBody(archive: Uint8Array, filename: string): { body: Uint8Array; contentType: string } {
  const boundary = `dss-${randomBytes(16).toString('hex')}`;
  // A quote or line break in a file name would end the header: they are replaced.
  const safeName = filename.replace(/["\r\n\\]/g, '_');
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="payload"; filename="${safeName}"\r\nContent-Type: application/zip\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, archive, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A progress bar of `total` bytes, updated at most every 200 ms (a log then gets a few lines, not one per piece). */
function byteProgress(label: string, total: number): { update(sent: number): void; stop(): void } {
  const progress = startProgress(label, total, 'bytes');
  let last = 0;
  return {
    update(sent) {
      const now = Date.now();
      if (sent < total && now - last < 200) return;
      last = now;
      progress.update(sent);
    },
    stop: () => progress.stop(),
  };
}

/**
 * Uploads an archive of at most MAX_DIRECT_UPLOAD_BYTES in one request: a multipart POST of part `payload`.
 * The body is streamed through openapi-fetch (`bodySerializer` returning the counting stream, `duplex` passed on to
 * the Request) with its Content-Length, which the upload address needs to bound the request before reading it.
 * @returns the 201 body and its Location (a path of the main address)
 * @throws ApiError on any other answer: 409 (the version exists), 413 (quota), 422 (every violation), ...
 */
export async function uploadDirect(
  dss: DssClient,
  companyId: string,
  source: ArchiveSource,
): Promise<{ stored: StoredScenario; location: string | null }> {
  const archive = source.bytes ?? (await readFile(source.path ?? ''));
  const { body, contentType } = multipartBody(archive, source.filename);
  const progress = byteProgress('Uploading', body.byteLength);
  try {
    const stream = countingBody(piecesOf({ ...source, bytes: body }), progress.update);
    const result = await dss.upload.POST('/companies/{companyId}/resources/scenarios', {
      params: { path: { companyId } },
      // The typed body is the form's fields; what is sent is the serialized stream.
      body: { payload: source.filename },
      bodySerializer: () => stream,
      headers: { 'content-type': contentType, 'content-length': String(body.byteLength) },
      duplex: 'half',
    });
    return { stored: expectOk(result), location: result.response.headers.get('location') };
  } finally {
    progress.stop();
  }
}

/** Options of uploadPresigned. */
export interface PresignedOptions {
  /** How long to wait for the outcome after the PUT, ms. */
  waitTimeoutMs: number;
  /** Pause between two status reads, ms. @default 1000 */
  pollIntervalMs?: number;
}

/**
 * Uploads an archive through a presigned slot: requests the slot, PUTs the bytes to its URL with the headers it names
 * (fetch directly: the URL is the storage's, not a route of the client), then reads the slot's status until it is no
 * longer PENDING.
 * @returns the final status: STORED (with `result`) or REJECTED (with `problem`)
 * @throws ApiError when the slot or a status read is refused; CommandFailed when the storage refuses the PUT or the
 * outcome is still PENDING after `waitTimeoutMs`
 */
export async function uploadPresigned(
  dss: DssClient,
  companyId: string,
  source: ArchiveSource,
  options: PresignedOptions,
): Promise<{ status: UploadSlotStatus; response: Response }> {
  const slot = expectOk(await dss.upload.POST('/companies/{companyId}/resources/scenarios/uploads', { params: { path: { companyId } } }));
  const progress = byteProgress('Uploading', source.size);
  try {
    const put = await fetch(slot.url, {
      method: slot.method,
      headers: { ...slot.headers, 'content-length': String(source.size) },
      body: countingBody(piecesOf(source), progress.update),
      duplex: 'half',
    });
    if (!put.ok) {
      const text = (await put.text()).trim().slice(0, 500);
      throw new CommandFailed(
        `The storage refused the archive (${put.status} ${visible(put.statusText)})${text === '' ? '' : `: ${visible(text)}`}`,
      );
    }
  } finally {
    progress.stop();
  }
  note(`Uploaded ${formatBytes(source.size)}; waiting for upload ${slot.uploadId} to be validated…`);
  const deadline = Date.now() + options.waitTimeoutMs;
  const interval = options.pollIntervalMs ?? 1000;
  for (;;) {
    const result = await dss.upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { companyId, uploadId: slot.uploadId } },
    });
    const status = expectOk(result);
    if (status.status !== 'PENDING') return { status, response: result.response };
    if (Date.now() >= deadline) {
      throw new CommandFailed(
        `Upload ${slot.uploadId} is still PENDING after ${options.waitTimeoutMs / 1000} s; its outcome will be at GET {scenario_upload_url}/companies/${companyId}/resources/scenarios/uploads/${slot.uploadId}.`,
      );
    }
    await new Promise((done) => setTimeout(done, Math.min(interval, Math.max(0, deadline - Date.now()))));
  }
}

/** The problem of a REJECTED upload as the ApiError a direct upload would have thrown (same report, same exit code). */
export function rejection(status: UploadSlotStatus, response: Response): ApiError {
  const problem = status.problem ?? {
    type: 'about:blank',
    title: 'Upload Rejected',
    status: 422 as const,
    detail: `Upload ${status.uploadId} was rejected.`,
  };
  return new ApiError(problem.status, problem, response);
}
