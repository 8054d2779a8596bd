import { ulid } from 'ulid';
import type { CompanyRepository } from '../shared/companies.js';
import { DomainError, isServiceFailure, NotFoundError, UploadNotCompletedError } from '../shared/errors.js';
import { IDENTIFIER_PATTERN, ULID_PATTERN, unanchored } from '../shared/identifiers.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { UploadSlot } from './model.js';
import { UPLOAD_URL_LIFETIME_SECONDS } from './model.js';
import type { ArchiveStore, ScenarioRepository, UploadSlotRepository } from './ports.js';
import { UploadAbandonedError, uploadScenario } from './upload.js';

/** Object key prefix of presigned uploads; the object-created notification is filtered on it. */
export const UPLOAD_PREFIX = 'uploads/';

/** The object key of a presigned upload: `uploads/{companyId}/{uploadId}.zip`, the company id and the ULID captured. */
const UPLOAD_KEY_PATTERN = new RegExp(`^uploads/(${unanchored(IDENTIFIER_PATTERN)})/(${unanchored(ULID_PATTERN)})\\.zip$`);

/** What the presigned-upload use cases need. */
export interface PresignedUploadDependencies {
  companies: CompanyRepository;
  scenarios: ScenarioRepository;
  archives: ArchiveStore;
  uploads: UploadSlotRepository;
  now?: () => Date;
  /** Lifetime of granted URLs, seconds. @default UPLOAD_URL_LIFETIME_SECONDS */
  urlLifetimeSeconds?: number;
  /** The problem body a direct upload refused with `error` answers: what a REJECTED slot keeps (UploadSlot.problem). */
  problemOf: ProblemOf;
}

/** Shapes a refusal as the problem+json body (without `instance`) the HTTP API answers for it. */
export type ProblemOf = (error: DomainError) => Record<string, unknown>;

/** The answer to a slot request: where and how to PUT the archive, and until when. */
export interface UploadSlotGrant {
  uploadId: string;
  /** Presigned URL (S3 in AWS, s3rver locally). */
  url: string;
  method: 'PUT';
  /** Headers the PUT must carry. */
  headers: Record<string, string>;
  /** ISO-8601. */
  expiresAt: string;
}

/** The status view of a slot (docs/contract.md: PENDING, STORED with the 201 body, REJECTED with the 413/422 details). */
export interface UploadSlotView {
  uploadId: string;
  status: 'PENDING' | 'STORED' | 'REJECTED';
  created: string;
  expiresAt: string;
  result?: Record<string, unknown>;
  problem?: Record<string, unknown>;
}

/** Parses `uploads/{company}/{uploadId}.zip`; undefined for any other key. */
export function parseUploadObjectKey(key: string): { company: string; uploadId: string } | undefined {
  const match = UPLOAD_KEY_PATTERN.exec(key);
  return match === null ? undefined : { company: match[1] as string, uploadId: match[2] as string };
}

/**
 * Grants a presigned upload slot for archives too large for the upload address (docs/contract.md, "Scenario packages").
 * @throws ForbiddenError without `scenarios:write` on the company.
 * @throws NotFoundError when the company does not exist.
 */
export async function requestUploadSlot(
  dependencies: PresignedUploadDependencies,
  principal: Principal,
  companyId: string,
): Promise<UploadSlotGrant> {
  authorizeCompany(principal, companyId);
  if ((await dependencies.companies.get(companyId)) === undefined) throw new NotFoundError(`Company '${companyId}' does not exist.`);
  const now = dependencies.now?.() ?? new Date();
  const uploadId = ulid(now.getTime());
  const objectKey = `${UPLOAD_PREFIX}${companyId}/${uploadId}.zip`;
  const lifetimeSeconds = dependencies.urlLifetimeSeconds ?? UPLOAD_URL_LIFETIME_SECONDS;
  const expiresAt = new Date(now.getTime() + lifetimeSeconds * 1000).toISOString();
  await dependencies.uploads.create({
    uploadId,
    company: companyId,
    objectKey,
    requestedBy: principal.subject,
    created: now.toISOString(),
    expiresAt,
    status: 'PENDING',
    // The sweeper first looks at the slot when its URL expires (upload-sweeper.ts).
    sweepAt: expiresAt,
  });
  const url = await dependencies.archives.presignPut(objectKey, 'application/zip', lifetimeSeconds);
  return { uploadId, url, method: 'PUT', headers: { 'content-type': 'application/zip' }, expiresAt };
}

/**
 * Reads a slot's status.
 * @throws ForbiddenError without `scenarios:read` on the company.
 * @throws NotFoundError when the company has no such upload.
 */
export async function getUploadSlot(
  dependencies: Pick<PresignedUploadDependencies, 'uploads'>,
  principal: Principal,
  companyId: string,
  uploadId: string,
): Promise<UploadSlotView> {
  authorizeCompany(principal, companyId);
  const slot = ULID_PATTERN.test(uploadId) ? await dependencies.uploads.get(companyId, uploadId) : undefined;
  if (slot === undefined) throw new NotFoundError(`Upload '${uploadId}' does not exist in company '${companyId}'.`);
  return {
    // PROCESSING is internal: to the client the archive is still pending.
    uploadId: slot.uploadId,
    status: slot.status === 'PROCESSING' ? 'PENDING' : slot.status,
    created: slot.created,
    expiresAt: slot.expiresAt,
    ...(slot.result === undefined ? {} : { result: slot.result }),
    ...(slot.problem === undefined ? {} : { problem: slot.problem }),
  };
}

/**
 * How long a processing claim is trusted before another event may take the slot over (Lambda's maximum run), ms;
 * also how long after an archive arrived its processing must have completed before the sweeper rejects the upload
 * as interrupted.
 */
export const PROCESSING_CLAIM_TIMEOUT_MS = 15 * 60 * 1000;

/** The refusal of a slot whose archive arrived after its `expiresAt`, or never (`arrivedAt` undefined): reason `expired`. */
export function expiredUploadError(slot: Pick<UploadSlot, 'expiresAt'>, arrivedAt?: string): UploadNotCompletedError {
  const what =
    arrivedAt === undefined
      ? 'No archive arrived before the upload slot expired'
      : `The archive arrived at ${arrivedAt}, after the upload slot expired`;
  return new UploadNotCompletedError(
    `${what} at ${slot.expiresAt}; nothing was stored. Request a new upload slot (POST .../resources/scenarios/uploads) and PUT the archive before its expiresAt.`,
    'expired',
  );
}

/** The refusal of a slot whose archive arrived but whose processing never completed: reason `interrupted`. */
export function interruptedUploadError(timeoutMs: number): UploadNotCompletedError {
  return new UploadNotCompletedError(
    `The archive arrived but its validation did not complete within ${Math.round(timeoutMs / 1000)} s; nothing was stored and the uploaded object was deleted. Request a new upload slot and PUT the archive again.`,
    'interrupted',
  );
}

/**
 * Validates and stores an archive PUT through a slot (S3 object-created event), with exactly the rules of a direct
 * upload, in the name of the slot's requester, reading the object by range and storing it by server-side copy, so
 * memory stays bounded whatever the archive's size. The slot is claimed first (conditional write), so two events
 * for one slot never both process it. The uploaded object is deleted afterwards, and also when it arrives for a
 * slot that is unknown or already finished, so nothing under `uploads/` escapes quota accounting. An archive that
 * arrived after the slot's `expiresAt` (a PUT started just before the URL expired, or a store that does not enforce
 * the expiry) is not validated: the slot becomes REJECTED with reason `expired` and the object is deleted.
 * @param arrivedAt ISO-8601: when the PUT completed (the S3 event's `eventTime`); @default now.
 * @returns the slot's resulting status, or 'IGNORED' for keys that are not upload slots, finished or claimed slots.
 * @throws Error only for unexpected backend failures (the event is then retried).
 */
export async function processUploadedArchive(
  dependencies: PresignedUploadDependencies,
  objectKey: string,
  arrivedAt?: string,
): Promise<UploadSlot['status'] | 'IGNORED'> {
  const parsed = parseUploadObjectKey(objectKey);
  if (parsed === undefined) return 'IGNORED';
  const slot = await dependencies.uploads.get(parsed.company, parsed.uploadId);
  if (slot === undefined || slot.status === 'STORED' || slot.status === 'REJECTED') {
    await dependencies.archives.delete(objectKey);
    return 'IGNORED';
  }
  const now = dependencies.now?.() ?? new Date();
  const arrival = arrivedAt === undefined || Number.isNaN(Date.parse(arrivedAt)) ? now : new Date(arrivedAt);
  if (slot.status === 'PENDING' && arrival.getTime() > Date.parse(slot.expiresAt)) {
    const rejected = await dependencies.uploads.reject(
      slot.company,
      slot.uploadId,
      { status: 'PENDING' },
      dependencies.problemOf(expiredUploadError(slot, arrival.toISOString())),
    );
    if (!rejected) return 'IGNORED';
    await dependencies.archives.delete(objectKey);
    return 'REJECTED';
  }
  const source = await dependencies.archives.openRandomAccess(objectKey);
  if (source === undefined) return 'IGNORED';
  const claimedAt = now.toISOString();
  const staleBefore = new Date(now.getTime() - PROCESSING_CLAIM_TIMEOUT_MS).toISOString();
  const sweepAt = new Date(now.getTime() + PROCESSING_CLAIM_TIMEOUT_MS).toISOString();
  if (!(await dependencies.uploads.claim(slot.company, slot.uploadId, claimedAt, staleBefore, sweepAt))) return 'IGNORED';

  const principal: Principal = { subject: slot.requestedBy, companies: [slot.company], scopes: new Set(['scenarios:write']) };
  let rejection: Record<string, unknown>;
  try {
    // Recording the version moves the slot to STORED in the same transaction (only under this claim).
    await uploadScenario(dependencies, principal, slot.company, { source, objectKey, slot: { uploadId: slot.uploadId, claimedAt } });
    await dependencies.archives.delete(objectKey);
    return 'STORED';
  } catch (error) {
    // The sweeper (or a takeover) decided the slot's outcome first, and deletes the object.
    if (error instanceof UploadAbandonedError) return 'IGNORED';
    if (!(error instanceof DomainError) || isServiceFailure(error)) throw error;
    rejection = dependencies.problemOf(error);
  }
  await dependencies.uploads.complete(slot.company, slot.uploadId, claimedAt, { status: 'REJECTED', problem: rejection });
  await dependencies.archives.delete(objectKey);
  return 'REJECTED';
}
