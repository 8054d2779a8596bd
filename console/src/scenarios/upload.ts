/**
 * Sending a scenario archive from the browser, as the CLI does (cli/upload.ts): up to the direct upload limit a
 * multipart POST of part `payload` to the upload address, above it a presigned slot (request the slot, PUT the bytes
 * to the storage, read the slot's status until it is no longer PENDING). The bytes go through XMLHttpRequest, the only
 * browser API that reports an upload's progress; every other call goes through the typed client.
 */
import type { components, ProblemBody } from '../../../client/index.js';
import { MAX_DIRECT_UPLOAD_BYTES } from '../../../client/limits.js';
import { addresses, api, refreshSession, signOut, token } from '../session.js';

// Largest archive a direct upload accepts, bytes (4 MiB); larger archives take a presigned slot.
export { MAX_DIRECT_UPLOAD_BYTES };

/** Pause between two reads of a presigned upload's status, ms. */
const STATUS_POLL_MS = 1000;

/**
 * How long after its slot's `expiresAt` an upload may still be PENDING before the console stops reading its status,
 * ms: the service's sweeper rejects an unfinished slot within minutes of its deadline.
 */
const STATUS_GRACE_MS = 5 * 60 * 1000;

/** The stored version a 201 (or a STORED slot) describes. */
export type StoredScenario = components['schemas']['StoredScenario'];

/** A refusal's problem: the RFC 9457 members, `errors` (422), and the quota figures of a quota 413. */
export type UploadProblem = ProblemBody & { quotaBytes?: number; usedBytes?: number; archiveBytes?: number; reason?: string };

/** How an upload ended: stored, refused by the service with a problem, or failed before the service could answer. */
export type UploadOutcome =
  | { kind: 'stored'; stored: StoredScenario }
  | { kind: 'refused'; status: number; problem: UploadProblem }
  | { kind: 'failed'; message: string };

/** What an upload reports while it runs. */
export interface UploadProgress {
  /** Where it is: sending the bytes, or waiting for the service to validate a presigned upload. */
  phase: 'sending' | 'validating';
  /** Bytes of the archive sent so far. */
  sent: number;
  /** The archive's size, bytes. */
  total: number;
}

/** A finished XMLHttpRequest: its status (0 when no answer came) and body text. */
interface Sent {
  status: number;
  text: string;
  contentType: string;
}

/**
 * Sends `body` with XMLHttpRequest, reporting `upload.onprogress`'s loaded bytes.
 * @returns the answer's status and text; status 0 when the request failed (network, CORS, abort)
 */
function send(method: string, url: string, headers: Record<string, string>, body: Blob, onBytes: (loaded: number) => void): Promise<Sent> {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open(method, url);
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => onBytes(event.loaded);
    // The last progress event may be skipped for a body sent at once: `load` says every byte went.
    request.upload.onload = () => onBytes(body.size);
    const done = () =>
      resolve({ status: request.status, text: request.responseText, contentType: request.getResponseHeader('content-type') ?? '' });
    request.onload = done;
    request.onerror = done;
    request.onabort = done;
    request.send(body);
  });
}

/** An answer's problem body, or one made from its status when it sent none. */
function problemOf(sent: Sent): UploadProblem {
  if (/json/.test(sent.contentType)) {
    try {
      const body = JSON.parse(sent.text) as UploadProblem;
      if (typeof body === 'object' && body !== null) return body;
    } catch {
      // Not JSON after all: described by its status below.
    }
  }
  return { type: 'about:blank', title: `HTTP ${sent.status}`, status: sent.status, detail: `The service answered ${sent.status}.` };
}

/** The header a call of the typed client carries (session.ts): the same token, read now. */
function authorization(): Record<string, string> {
  return token.value === null ? {} : { authorization: `Bearer ${token.value}` };
}

/** What a refusal of the upload address means for the session: a 401 ends it, as the typed client's middleware does. */
function endSessionOn401(status: number): void {
  if (status === 401) signOut('Your session has ended. Sign in again to go on where you were.');
}

/**
 * A direct upload: `file` as part `payload` of a multipart/form-data body (built here, so that the bytes of the
 * archive within the body are known for the progress), POSTed to `{scenario_upload_url}/companies/{company}/resources/scenarios`.
 * A 401 refreshes the session and sends it once more (`retried`), as the typed client does; a second 401 ends it.
 */
async function uploadDirect(
  company: string,
  file: File,
  onProgress: (progress: UploadProgress) => void,
  retried = false,
): Promise<UploadOutcome> {
  const boundary = `dss-${crypto.randomUUID()}`;
  // A quote or line break in a file name would end the header: they are replaced.
  const filename = file.name.replace(/["\r\n\\]/g, '_');
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="payload"; filename="${filename}"\r\nContent-Type: application/zip\r\n\r\n`,
  );
  const body = new Blob([head, file, `\r\n--${boundary}--\r\n`]);
  const url = `${addresses.upload.replace(/\/+$/, '')}/companies/${encodeURIComponent(company)}/resources/scenarios`;
  const sent = await send(
    'POST',
    url,
    { ...authorization(), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    (loaded) => onProgress({ phase: 'sending', sent: Math.min(file.size, Math.max(0, loaded - head.byteLength)), total: file.size }),
  );
  if (sent.status === 0)
    return { kind: 'failed', message: 'The upload address could not be reached. Check your connection and try again.' };
  if (sent.status === 201) return { kind: 'stored', stored: JSON.parse(sent.text) as StoredScenario };
  if (sent.status === 401 && !retried && (await refreshSession()) === 'refreshed') return uploadDirect(company, file, onProgress, true);
  endSessionOn401(sent.status);
  return { kind: 'refused', status: sent.status, problem: problemOf(sent) };
}

/**
 * A presigned upload: asks for a slot, PUTs `file` to its URL with the headers it names, then reads the slot's status
 * every STATUS_POLL_MS until it is STORED or REJECTED.
 */
async function uploadPresigned(company: string, file: File, onProgress: (progress: UploadProgress) => void): Promise<UploadOutcome> {
  const path = { companyId: company };
  const granted = await api.upload.POST('/companies/{companyId}/resources/scenarios/uploads', { params: { path } });
  if (granted.data === undefined) {
    return { kind: 'refused', status: granted.response.status, problem: granted.error as UploadProblem };
  }
  const slot = granted.data;
  onProgress({ phase: 'sending', sent: 0, total: file.size });
  const put = await send(slot.method, slot.url, slot.headers, file, (loaded) =>
    onProgress({ phase: 'sending', sent: Math.min(file.size, loaded), total: file.size }),
  );
  if (put.status === 0)
    return { kind: 'failed', message: 'The archive storage could not be reached. Check your connection and try again.' };
  if (put.status < 200 || put.status > 299) {
    return { kind: 'failed', message: `The archive storage refused the archive (${put.status}). Try again.` };
  }
  onProgress({ phase: 'validating', sent: file.size, total: file.size });
  const deadline = new Date(slot.expiresAt).getTime() + STATUS_GRACE_MS;
  for (;;) {
    const read = await api.upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { ...path, uploadId: slot.uploadId } },
    });
    if (read.data === undefined) return { kind: 'refused', status: read.response.status, problem: read.error as UploadProblem };
    const status = read.data;
    if (status.status === 'STORED' && status.result !== undefined) return { kind: 'stored', stored: status.result };
    if (status.status === 'REJECTED') {
      const problem = (status.problem ?? {
        type: 'about:blank',
        title: 'Upload Rejected',
        status: 422,
        detail: `Upload ${slot.uploadId} was rejected.`,
      }) as UploadProblem;
      return { kind: 'refused', status: problem.status, problem };
    }
    if (Date.now() > deadline) {
      return {
        kind: 'failed',
        message: `Upload ${slot.uploadId} is still being validated. Reload the page later to see whether it was stored.`,
      };
    }
    await new Promise((done) => setTimeout(done, STATUS_POLL_MS));
  }
}

/**
 * Uploads a scenario archive to `company`: directly up to MAX_DIRECT_UPLOAD_BYTES, else through a presigned slot.
 * @param onProgress called as bytes go and when the service starts validating a presigned upload
 * @returns how it ended (never throws: an unreachable service is a `failed` outcome)
 */
export async function uploadArchive(company: string, file: File, onProgress: (progress: UploadProgress) => void): Promise<UploadOutcome> {
  try {
    onProgress({ phase: 'sending', sent: 0, total: file.size });
    return file.size <= MAX_DIRECT_UPLOAD_BYTES
      ? await uploadDirect(company, file, onProgress)
      : await uploadPresigned(company, file, onProgress);
  } catch {
    return { kind: 'failed', message: 'The upload address could not be reached. Check your connection and try again.' };
  }
}
