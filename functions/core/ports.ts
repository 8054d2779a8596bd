/**
 * Ports: the small interfaces the domain needs from the outside world.
 * Adapters in `functions/adapters/aws` (DynamoDB, S3, OpenSearch) and
 * `functions/adapters/embedded` (local engines) implement them; the
 * composition root (`functions/platform/composition.ts`) picks which.
 */
import type { DeviceStatusState } from './devices/desired-state.js';
import type { Device, DeviceCredential, StoredDevice } from './devices/model.js';
import type { RolloutState, RolloutWhat, WaveState } from './rollouts/model.js';
import type { DocumentKey, SearchDocument } from './search/documents.js';
import type { CountQuery, SearchQuery, SearchResult, ValueCounts } from './search/query.js';

/** The search index (OpenSearch in AWS, the embedded engine locally). Never the source of truth. */
export interface SearchIndex {
  /**
   * Runs one page of a search: company restriction always applied, filters OR within a field and AND across
   * fields, or `global` full text; sorted with the (type, company, id) tie-breaker. Callers must treat the returned
   * documents as read-only (the embedded adapter hands out its stored documents, frozen).
   * @throws ServiceUnavailableError when the backend cannot be reached.
   */
  search(query: SearchQuery): Promise<SearchResult>;
  /** Counts, per field of `query.fields`, how many matching documents carry each value. */
  countValues(query: CountQuery): Promise<ValueCounts>;
  /** Inserts or replaces documents (by their DocumentKey). */
  upsert(documents: SearchDocument[]): Promise<void>;
  /** Removes documents; unknown keys are ignored. */
  remove(keys: DocumentKey[]): Promise<void>;
  /**
   * The ids of the device documents of `query.companies` matching `query.filters` (OR within a field, AND across
   * fields, as `search`): every match up to `max`, sorted by id ascending, and `total`, the number of matches (also
   * those beyond `max`). Scenario documents never match. What a rollout's targets are resolved with.
   * @throws ServiceUnavailableError when the backend cannot be reached.
   */
  selectIds(query: { companies: string[]; filters: Map<string, string[]> }, max: number): Promise<{ ids: string[]; total: number }>;
}

/** A company and its storage account (bytes). */
export interface Company {
  id: string;
  name: string;
  /** Storage quota for scenario archives, bytes. */
  quotaBytes: number;
  /** Bytes of stored archives, bytes. */
  usedBytes: number;
}

/** Company records (companies table). */
export interface CompanyRepository {
  /** Returns the company, or undefined when it does not exist. */
  get(companyId: string): Promise<Company | undefined>;
  /** Returns the companies that exist among `companyIds`, in no particular order. */
  getMany(companyIds: readonly string[]): Promise<Company[]>;
}

/** Device records (devices table). */
export interface DeviceRepository {
  /**
   * Returns the ids among `deviceIds` that exist in `companyId`, using batched reads. A device being deleted
   * (`deleting`) counts as absent.
   */
  existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>>;
  /** Writes devices unconditionally (seeding). Feeds the search index through the table's stream. */
  put(devices: readonly Device[]): Promise<void>;
  /** One device as stored (credential and `deleting` included), or undefined. A strongly consistent read. */
  get(companyId: string, deviceId: string): Promise<StoredDevice | undefined>;
  /**
   * Records a device's health report: one conditional update setting `health`, `connection` (CONNECTED since
   * `connectedSince`) and `updated`, only if the device exists, is not being deleted and still has the credential
   * `credentialId`. Feeds the search index through the table's stream.
   * @returns `recorded`, or `refused` when the condition failed (nothing written).
   */
  recordHealth(
    companyId: string,
    deviceId: string,
    credentialId: string,
    report: { health: NonNullable<Device['health']>; connectedSince: string; updated: string },
  ): Promise<'recorded' | 'refused'>;
  /**
   * Registers a new device (one conditional write: only if no device with its id exists in its company, deleting or
   * not). @returns false when one exists.
   */
  create(device: Device): Promise<boolean>;
  /**
   * Sets a device's static fields and `updated` (one conditional write: only if it exists and is not being deleted);
   * health, connection and credential are left as they are. A member of `fields` left undefined is left as stored.
   * @returns the device as stored afterwards, or undefined when it is absent or being deleted.
   */
  update(companyId: string, deviceId: string, fields: DeviceStaticFields, updated: string): Promise<StoredDevice | undefined>;
  /**
   * Replaces the device's credential (one conditional write: only if it exists and is not being deleted), so that
   * every earlier secret and the tokens issued for it stop working. @returns false when absent or being deleted.
   */
  setCredential(companyId: string, deviceId: string, credential: DeviceCredential): Promise<boolean>;
  /**
   * Sets `deleting` (one conditional write: only if it exists; already deleting is fine, so a retried delete
   * continues). From then on the device counts as absent everywhere. @returns false when absent.
   */
  markDeleting(companyId: string, deviceId: string): Promise<boolean>;
  /** Deletes the device item (the last step of a delete); an absent one is ignored. */
  remove(companyId: string, deviceId: string): Promise<void>;
  /**
   * Stores `tag` as the device's desired state version (StoredDevice.desiredState) with the next generation, only if
   * the stored one still has generation `expectedGeneration` (undefined: only if none is stored): one conditional
   * write, a compare-and-set, so that of writers that read the same generation exactly one wins. Never creates a
   * device. Feeds the devices table's stream (its search document does not change).
   * @returns `written`; `conflict` when the stored generation is another (read again); `absent` when no device.
   */
  setDesiredState(
    companyId: string,
    deviceId: string,
    tag: string,
    expectedGeneration: number | undefined,
  ): Promise<'written' | 'conflict' | 'absent'>;
}

/** The fields of a device its operator sets; the rest is the device's own report. */
export type DeviceStaticFields = Partial<Pick<Device, 'serial' | 'location' | 'geoLocation'>>;

/**
 * The claims of a device token (client credentials grant) that the signer does not add itself: the device, its
 * company, DEVICE_SCOPE, the OAuth client id and the credential id (DEVICE_TOKEN_CLAIMS).
 */
export interface DeviceTokenClaims {
  /** The device id. */
  sub: string;
  /** The device's one company. */
  companies: [string];
  /** DEVICE_SCOPE. */
  scope: string;
  /** deviceClientId(company, deviceId). */
  client_id: string;
  /** ULID of the credential the token is issued for. */
  cred: string;
}

/** Signs device tokens with the issuer's key (the local issuer's key locally, a KMS key on AWS). */
export interface DeviceTokenSigner {
  /**
   * A compact JWS (JWT) carrying `claims` plus `iss`, `aud`, `iat`, `nbf` (= iat), `exp` (= iat + lifetimeSeconds)
   * and a fresh `jti`, signed with an algorithm the token verifiers accept (ES256, RS256 or EdDSA) and the key's `kid`.
   */
  sign(claims: DeviceTokenClaims, lifetimeSeconds: number): Promise<string>;
}

/**
 * The answer of ClientFailureStore.reserve: the attempt may be verified (`reserved`, with the key's count in its
 * window, this attempt included), or not (the window is at its limit until `windowEndsAt`).
 */
export type ClientAttemptReservation =
  | { reserved: true /** Attempts in the open window, this one included. */; attempts: number /** Epoch ms. */; windowEndsAt: number }
  | { reserved: false /** When the key may try again, epoch ms. */; windowEndsAt: number };

/**
 * Attempts per key (a client id or username from one source: clientFailureKey, userFailureKey) that did not end in a
 * success, counted in a window that a key's first attempt opens and that closes `windowMs` later, whatever happens in
 * between: a count only ever ends by time or by `clear`, never later. Shared by every process and function instance
 * (the clientFailures table, whose items expire by DynamoDB TTL), so that its bound holds across all of them.
 */
export interface ClientFailureStore {
  /**
   * Reserves one verification for `key` at `now` (epoch ms), atomically against every other process: opens a window
   * of `policy.windowMs` counting 1 when none is open (none yet, or the last one closed), else adds 1 to the open
   * window while its count is below `policy.limit`, else refuses. So at most `policy.limit` verifications of a key
   * happen per window, however many attempts arrive at once and wherever. One conditional write (two when a closed
   * window is replaced). Writers that keep replacing a closed window under it for a few rounds get a refusal ending
   * a second later: the key is that busy.
   * @throws ServiceUnavailableError (503, Retry-After) when the store cannot be used (missing, access denied); a
   *   throttled or unreachable store throws the client's own error, which the platform answers 503 as well.
   */
  reserve(key: string, now: number, policy: { limit: number; windowMs: number }): Promise<ClientAttemptReservation>;
  /** Forgets the key's count (the client authenticated). One delete. */
  clear(key: string): Promise<void>;
  /**
   * Gives back one attempt reserve counted (its check could not be made: a backend failed), so that an outage does
   * not leave a device blocked once it is over. One conditional update, a no-op when the count is 0 or gone.
   */
  release(key: string): Promise<void>;
}

/** Runs a secret's hash in a verification slot of the process (VerificationPass.verify with its priority set). */
export type HashSlot = <T>(hash: () => Promise<T>) => Promise<T>;

/**
 * Admission and ordering of the secret verifications of one process (the hash runs on a small shared thread pool):
 * how many attempts may be under way, and which waits least. In-process only: it bounds this process's CPU, not a
 * key's attempts (ClientFailureStore does that, across processes).
 */
export interface VerificationGate {
  /**
   * Admits one authentication attempt from `source` (clientSourceOf) before any I/O, or answers undefined when too
   * many attempts of its class are under way (the caller answers at once that the service is busy). Every pass
   * admitted must be left (VerificationPass.leave) exactly once.
   */
  enter(source: string): VerificationPass | undefined;
}

/** One admitted attempt (VerificationGate.enter). */
export interface VerificationPass {
  /**
   * Runs `check` (the hash verification) once a verification slot of the process is free. Attempts from sources
   * without recent failures go first; `suspect` (e.g. the key has other attempts in its window) puts this one behind
   * them.
   */
  verify<T>(check: () => Promise<T>, suspect: boolean): Promise<T>;
  /** Ends the attempt; `failed` (a wrong secret or unknown client) makes its source suspect for a while. */
  leave(failed: boolean): void;
}

/** A stored, immutable scenario version. */
export interface ScenarioVersion {
  company: string;
  /** `scenario.json` `id` (`what.id`). */
  scenarioId: string;
  /** Semantic version (`what.subId`). */
  version: string;
  name: string;
  description?: string;
  /** Archive size, bytes. */
  size: number;
  /** Hex SHA-256 of the archive. */
  sha256: string;
  /** Object key of the archive in the archive store. */
  archiveKey: string;
  /** `sub` of the uploader. */
  uploadedBy: string;
  /** ISO-8601. */
  created: string;
}

/** Outcome of recording a version: stored, or refused with the reason. Nothing is written when refused. */
export type RecordVersionOutcome =
  | { kind: 'stored' }
  | { kind: 'version-exists' }
  | { kind: 'quota-exceeded'; quotaBytes: number; usedBytes: number }
  | { kind: 'company-not-found' }
  /** The guarding staged archive was abandoned by the sweeper (or is gone): nothing was recorded. */
  | { kind: 'staging-abandoned' }
  /** The guarding slot is no longer PROCESSING under this claim (rejected by the sweeper, taken over): nothing was recorded. */
  | { kind: 'claim-lost' };

/** A scenario summary: its name and the versions stored (scenarios table, `SCENARIO#{id}`). */
export interface ScenarioSummary {
  company: string;
  scenarioId: string;
  name: string;
  description?: string;
  /** Most recently uploaded version. */
  latestVersion: string;
  /** Stored versions in upload order. */
  versions: string[];
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
}

/** Read side of the scenario catalogue: listings with opaque cursors, all single Queries. */
export interface ScenarioCatalog {
  /** Scenarios of a company ordered by id. @throws BadRequestError on a cursor this adapter did not issue. */
  listScenarios(companyId: string, limit: number, cursor: string | undefined): Promise<Page<ScenarioSummary>>;
  /** One scenario summary, or undefined. */
  getScenario(companyId: string, scenarioId: string): Promise<ScenarioSummary | undefined>;
  /** Every stored version of a scenario, ordered by version key. */
  listVersions(companyId: string, scenarioId: string): Promise<ScenarioVersion[]>;
  /** One version, or undefined. */
  getVersion(companyId: string, scenarioId: string, version: string): Promise<ScenarioVersion | undefined>;
  /** The versions among `references` that exist, with batched reads, in no particular order. */
  getVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<ScenarioVersion[]>;
}

/** Scenario versions and their storage accounting (scenarios and companies tables). */
export interface ScenarioRepository {
  /**
   * Atomically (one DynamoDB transaction): creates the version if (company, id, version) is new, adds `size` to the
   * company's `usedBytes` only if the result stays within `quotaBytes`, and updates the scenario summary.
   */
  recordVersion(version: ScenarioVersion, guards?: RecordVersionGuards): Promise<RecordVersionOutcome>;
  /**
   * Records the intent to write `staged.archiveKey` (conditional put of a new item), before the object is written, so
   * that an archive whose version never gets recorded (the process died in between) can be found and deleted.
   */
  stageArchive(staged: StagedArchive): Promise<void>;
  /** Forgets a staged archive whose object the caller has deleted itself (a refused upload). Absent ones are ignored. */
  discardStagedArchive(company: string, stagedId: string): Promise<void>;
  /**
   * Marks a staged archive abandoned (conditional write: it still exists): from then on a recordVersion guarded by it
   * fails with `staging-abandoned`, so its object may be deleted. @returns false when it no longer exists (recorded or discarded).
   */
  abandonStagedArchive(company: string, stagedId: string): Promise<boolean>;
  /** Staged archives whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by an index query (no scan). */
  overdueStagedArchives(now: string, limit: number): Promise<StagedArchive[]>;
  /** Returns `scenarioId#version` strings of the given references that exist in `companyId`, with batched reads. */
  existingVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<Set<string>>;
}

/**
 * An archive object written (or about to be written) under its final key whose version record is not yet written
 * (scenarios table, `STAGED#{stagedId}`). recordVersion deletes it in its transaction, so a staged archive that
 * outlives `sweepAt` belongs to an upload that never finished: the sweeper deletes its object.
 */
export interface StagedArchive {
  company: string;
  /** ULID: the last segment of the archive key. */
  stagedId: string;
  /** Final object key (archiveKeyFor). */
  archiveKey: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: after this the upload is considered dead (longer than any processing may take). */
  sweepAt: string;
  /** Set by abandonStagedArchive: the object is being deleted and may no longer be recorded. */
  abandoned?: boolean;
}

/** What a recordVersion transaction must also check and change, atomically with the version record. */
export interface RecordVersionGuards {
  /** The staged archive of `archiveKey`: deleted by the transaction, which fails if it was abandoned or is gone. */
  stagedId: string;
  /**
   * The upload slot being processed: the transaction moves it to STORED with `result`, and fails unless it is still
   * PROCESSING under `claimedAt` (a slot the sweeper rejected never gets a version).
   */
  slot?: { uploadId: string; claimedAt: string; result: Record<string, unknown> };
}

/** An active deployment: (company, device, scenario, version) is its identity (docs/contract.md, "Deployments"). */
export interface ActiveDeployment {
  /** ULID of the action that created it. */
  id: string;
  company: string;
  deviceId: string;
  scenarioId: string;
  version: string;
  /** ISO-8601. */
  deployedAt: string;
  /** `sub` of the caller. */
  deployedBy: string;
  note?: string;
  /** The latest status the device reported for it (recordDeviceStatus); absent until the device reports one. */
  deviceStatus?: DeviceStatus;
  /**
   * Set when a rollout made it: the rollout and its wave (0-based), so that the device's INSTALLED or FAILED report
   * counts for that wave (RolloutRepository.recordReport).
   */
  rollout?: { id: string; wave: number };
}

/** A device's latest report on one active deployment, as stored on the slot. */
export interface DeviceStatus {
  /** ULID of the report: its history entry's id, and what tells the stream a new report arrived. */
  id: string;
  state: DeviceStatusState;
  /** The device's free text (bounded by the route), if it sent one. */
  message?: string;
  /** ISO-8601: when the service received the report. */
  updated: string;
}

/** Who undeployed an active deployment, when and why: the UNDEPLOY action recorded on the deployment itself. */
export interface UndeployMark {
  /** ULID of the UNDEPLOY action (= its result item `id`). */
  id: string;
  /** ISO-8601. */
  at: string;
  /** `sub` of the caller. */
  by: string;
  note?: string;
  /**
   * Set when the undeploy was not asked for by a deployment request but follows from another change: `DEVICE_DELETED`
   * (its device was deleted). Its history entry carries it as its `cause`.
   */
  cause?: 'DEVICE_DELETED';
}

/**
 * The stored state of one (company, device, scenario, version): an active deployment, or one just undeployed
 * (`undeploy` set) whose history and event are still to be derived from the table's stream before it is purged.
 * Listings and existence checks treat an undeployed one as absent.
 */
export interface DeploymentSlot extends ActiveDeployment {
  undeploy?: UndeployMark;
  /**
   * Set on a slot a storage migration moved to another key (the key it came from): its appearance under the new key
   * is no deployment change.
   */
  movedFrom?: string;
}

/** One line of the deployment history: every action, successful or not. */
export interface DeploymentHistoryEntry {
  /** Absent on entries stored before status reports existed: every such entry is an action. */
  kind?: 'ACTION';
  /** ULID of the action (= result item `id`). */
  id: string;
  company: string;
  deviceId: string;
  deviceSubId: string | null;
  targetType: string;
  whatType: string;
  scenarioId: string;
  version: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  state: 'SUCCESS' | 'FAILURE';
  cause: string | null;
  /** ISO-8601. */
  at: string;
  by: string;
  note?: string;
}

/**
 * One line of the deployment history recording a device's status report on one of its active deployments (derived
 * from the deployments table's stream when a slot's `deviceStatus.id` changes). Same keys as an action, so the
 * listing's filters (device, scenario, version, time) find it.
 */
export interface DeviceStatusHistoryEntry {
  kind: 'DEVICE_STATUS';
  /** ULID of the report (DeviceStatus.id). */
  id: string;
  company: string;
  deviceId: string;
  deviceSubId: null;
  targetType: 'DEVICE';
  whatType: 'SCENARIO';
  scenarioId: string;
  version: string;
  /** ULID of the active deployment the report is about (its DEPLOY action). */
  deploymentId: string;
  deviceStatus: { state: DeviceStatusState; message?: string };
  /** ISO-8601: when the service received the report. */
  at: string;
  /** The reporting device's OAuth client id (`{company}~{deviceId}`, deviceClientId). */
  by: string;
}

/** Any line of the deployment history. */
export type HistoryEntry = DeploymentHistoryEntry | DeviceStatusHistoryEntry;

/** An active deployment of one device as the device itself pulls it (DeploymentRepository.activeOnDevice). */
export type DeviceSlot = Pick<ActiveDeployment, 'id' | 'scenarioId' | 'version' | 'deployedAt' | 'deviceStatus'>;

/** A page of a listing with an opaque continuation cursor. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Active deployments and history (deployments table). */
export interface DeploymentRepository {
  /**
   * Creates the active deployment only if no deployment with the same identity is active (one conditional write,
   * which replaces an undeployed slot): of two racing identical calls exactly one returns `activated`. Its history
   * entry and event are derived from the table's stream (DeploymentSlot images), not written here.
   */
  activate(deployment: ActiveDeployment): Promise<'activated' | 'already-active'>;
  /**
   * Marks the active deployment undeployed with `undeploy` only if it is active (one conditional write): of two
   * racing calls one wins. The slot stops counting as active at once; its history entry and event are derived from
   * the table's stream, which then purges it (purgeUndeployed).
   */
  deactivate(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    undeploy: UndeployMark,
  ): Promise<'deactivated' | 'already-inactive'>;
  /**
   * Writes history entries with batched, idempotent puts keyed by the entry id (writing one twice leaves one entry).
   * @throws Error when some entries could not be written after retries.
   */
  recordHistory(entries: readonly HistoryEntry[]): Promise<void>;
  /**
   * Deletes undeployed slots whose UNDEPLOY is `undeployId` (conditional deletes: a slot deployed again since, or
   * already purged, is left alone).
   */
  purgeUndeployed(
    slots: readonly (Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'> & { undeployId: string })[],
  ): Promise<void>;
  /**
   * Lists active deployments of one device, or of every device when `deviceId` is undefined, ordered by
   * (device, scenario, version). @throws BadRequestError on a cursor this adapter did not issue.
   */
  listActive(companyId: string, deviceId: string | undefined, limit: number, cursor: string | undefined): Promise<Page<ActiveDeployment>>;
  /**
   * Every active deployment of one device (all pages of one strongly consistent Query on the device's slots), with
   * only what the device's desired state needs, ordered by (scenario, version).
   */
  activeOnDevice(companyId: string, deviceId: string): Promise<DeviceSlot[]>;
  /**
   * Sets `status` as the latest report on the active deployment (one conditional write: the slot exists and is not
   * undeployed). Its history entry and event are derived from the table's stream.
   * @returns false when no such deployment is active (nothing written).
   */
  recordDeviceStatus(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    status: DeviceStatus,
  ): Promise<boolean>;
  /** Returns which of `identities` are active, as `deviceId#scenarioId#version` strings, with batched reads. */
  activeAmong(
    companyId: string,
    identities: readonly Pick<ActiveDeployment, 'deviceId' | 'scenarioId' | 'version'>[],
  ): Promise<Set<string>>;
}

/** A byte range reader over one stored object: what the bounded-memory archive validator reads through. */
export interface RandomAccessSource {
  /** Object size, bytes. */
  size: number;
  /** Streams bytes [start, end) of the object (end exclusive). */
  createReadStream(start: number, end: number): NodeJS.ReadableStream;
}

/** Archive object storage (S3 in AWS, s3rver locally). */
export interface ArchiveStore {
  /** Opens `key` for ranged reads (S3 GetObject with Range); undefined when absent. */
  openRandomAccess(key: string): Promise<RandomAccessSource | undefined>;
  /** Server-side copy of `sourceKey` to `targetKey` (S3 CopyObject): no bytes pass through the caller. */
  copy(sourceKey: string, targetKey: string): Promise<void>;
  /** A URL that lets its holder GET `key` until it expires (seconds); `filename` sets Content-Disposition. */
  presignGet(key: string, expiresInSeconds: number, filename: string): Promise<string>;
  /** Stores bytes under `key`. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Reads a whole object; undefined when absent. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Deletes `key`; absent keys are ignored. */
  delete(key: string): Promise<void>;
  /** Size (bytes) and last-modified time (ISO-8601: when its upload completed) of `key`; undefined when absent. */
  stat(key: string): Promise<{ size: number; lastModified: string } | undefined>;
  /** A URL that lets its holder PUT one object at `key` with `contentType` until it expires (seconds). */
  presignPut(key: string, contentType: string, expiresInSeconds: number): Promise<string>;
}

/** State of a presigned upload: waiting for the archive, stored, or rejected with the problem a direct upload gets. */
export type UploadSlotStatus = 'PENDING' | 'PROCESSING' | 'STORED' | 'REJECTED';

/** A presigned upload slot (scenarios table, `UPLOAD#{uploadId}`). */
export interface UploadSlot {
  /** ULID. */
  uploadId: string;
  company: string;
  /** Object key the client PUTs to: `uploads/{company}/{uploadId}.zip`. */
  objectKey: string;
  /** `sub` of the caller who asked for the slot; the archive is stored in their name. */
  requestedBy: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: the presigned URL's expiry. */
  expiresAt: string;
  status: UploadSlotStatus;
  /** ISO-8601: when a processor claimed the slot (status PROCESSING). */
  claimedAt?: string;
  /**
   * ISO-8601: when the sweeper looks at the slot if it is still open (PENDING: `expiresAt`; PROCESSING: the claim's
   * deadline). Kept only while the slot is open, so only open slots are in the sweep index.
   */
  sweepAt?: string;
  /** When STORED: the 201 body of a direct upload. */
  result?: Record<string, unknown>;
  /** When REJECTED: the problem+json body a direct upload would get (409, 413, 422). */
  problem?: Record<string, unknown>;
}

/** Presigned upload slots. */
export interface UploadSlotRepository {
  /** Records a new PENDING slot (with its `sweepAt`). */
  create(slot: UploadSlot): Promise<void>;
  /** Returns the slot, or undefined when `company` has no such upload. */
  get(company: string, uploadId: string): Promise<UploadSlot | undefined>;
  /**
   * Claims a slot for processing (conditional write PENDING → PROCESSING, or a PROCESSING claim older than
   * `staleBefore`, left by a processor that died): of two racing events exactly one gets true.
   */
  claim(company: string, uploadId: string, claimedAt: string, staleBefore: string, sweepAt: string): Promise<boolean>;
  /**
   * Moves a PROCESSING slot claimed at `claimedAt` to its outcome (conditional write): false when the claim was lost,
   * so a redelivered event cannot overwrite the first outcome.
   */
  complete(
    company: string,
    uploadId: string,
    claimedAt: string,
    outcome: Pick<UploadSlot, 'status' | 'result' | 'problem'>,
  ): Promise<boolean>;
  /**
   * Rejects an open slot with `problem` (conditional write): only if it is still PENDING, or still PROCESSING under
   * `claimedAt` when given, so a sweeper racing a processor never overwrites a real outcome. @returns whether it applied.
   */
  reject(
    company: string,
    uploadId: string,
    expected: { status: 'PENDING' } | { status: 'PROCESSING'; claimedAt: string },
    problem: Record<string, unknown>,
  ): Promise<boolean>;
  /** Open slots whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by an index query (no scan). */
  overdue(now: string, limit: number): Promise<UploadSlot[]>;
}

/** Issues access tokens for username/password (the local issuer; on AWS Cognito signs users in itself). */
export interface IdentityProvider {
  /**
   * Returns a signed JWT and its lifetime in seconds, or undefined when the credentials are wrong. The password's
   * hash runs through `slot` (the process's verification gate), so that it shares the CPU bound of every secret check.
   * @param slot runs the hash; @default runs it at once
   */
  issueToken(username: string, password: string, slot?: HashSlot): Promise<{ accessToken: string; expiresInSeconds: number } | undefined>;
}

/**
 * Emitted for each successful DEPLOY or UNDEPLOY (EventBridge in AWS, an in-process bus locally), derived from the
 * deployments table's stream. `deploymentId` identifies the change: a consumer that sees it twice has seen one change.
 */
export interface DeploymentChangedEvent {
  type: 'DeploymentChanged';
  company: string;
  /** ULID of the action (the result item's `id`). */
  deploymentId: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  deviceId: string;
  scenarioId: string;
  version: string;
  /** ISO-8601. */
  at: string;
  by: string;
  note: string | null;
}

/**
 * Emitted for each status report of a device on one of its active deployments, derived from the deployments table's
 * stream. `statusId` identifies the report: a consumer that sees it twice has seen one report.
 */
export interface DeploymentStatusChangedEvent {
  type: 'DeploymentStatusChanged';
  company: string;
  /** ULID of the report (its history entry's id). */
  statusId: string;
  /** ULID of the active deployment the report is about (its DEPLOY action). */
  deploymentId: string;
  deviceId: string;
  scenarioId: string;
  version: string;
  state: DeviceStatusState;
  message: string | null;
  /** ISO-8601: when the service received the report. */
  at: string;
  /** The reporting device's OAuth client id. */
  by: string;
}

/** Every event the service publishes. */
export type DeploymentEvent = DeploymentChangedEvent | DeploymentStatusChangedEvent;

/** Publishes domain events so integrators need not poll. */
export interface EventPublisher {
  /**
   * Publishes events in order. Publishing an event published before (the same `deploymentEventId`) is allowed (the
   * stream consumer retries whole batches); the local bus drops such repeats, EventBridge delivers at least once.
   * @throws when the bus refuses them (the stream consumer then retries the batch).
   */
  publish(events: readonly DeploymentEvent[]): Promise<void>;
}

/** A connected device's presence entry whose heartbeat deadline has passed (presence table, `sweep` index). */
export interface OverduePresence {
  company: string;
  deviceId: string;
  /** ISO-8601: the last report's time. */
  lastSeen: string;
  /** ISO-8601: `lastSeen` + the heartbeat window, as read from the index. */
  sweepAt: string;
}

/**
 * What disconnecting an overdue device did: `disconnected` (it was CONNECTED, now DISCONNECTED), `released` (the
 * device is gone, being deleted or not CONNECTED: only the presence entry left the sweep index), `superseded` (a
 * report moved its deadline since the index was read: nothing changed).
 */
export type DisconnectOutcome = 'disconnected' | 'released' | 'superseded';

/**
 * Devices' last reports (presence table): a small item per device, written by every health report so that a report
 * that changes nothing searchable never writes the device item; while the device counts as connected it carries its
 * heartbeat deadline in the sparse `sweep` index.
 */
export interface PresenceRepository {
  /**
   * Records a report (one put of ~100 bytes): `lastSeen` and the deadline `sweepAt` (ISO-8601 both).
   * @returns `watched`: whether the entry replaced carried a deadline, i.e. the heartbeat sweeper had not disconnected
   *   the device (nor had it never reported) since its previous report.
   */
  touch(company: string, deviceId: string, lastSeen: string, sweepAt: string): Promise<{ watched: boolean }>;
  /** Entries whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by index queries (no scan), oldest first per shard. */
  overdue(now: string, limit: number): Promise<OverduePresence[]>;
  /**
   * Disconnects an overdue device in one transaction: the entry leaves the sweep index only if its `sweepAt` is still
   * `entry.sweepAt`, and the device becomes DISCONNECTED (since `disconnectedSince`, `updated` = `updated`) only if it
   * is CONNECTED and not being deleted. When only the device's condition fails, the entry still leaves the index
   * (conditionally). See DisconnectOutcome.
   */
  disconnect(entry: OverduePresence, disconnectedSince: string, updated: string): Promise<DisconnectOutcome>;
  /** Deletes a device's entry (device deletion); an absent one is ignored. */
  forget(company: string, deviceId: string): Promise<void>;
}

/** One wave of a stored rollout: its size, state and the range of target chunks holding its devices. */
export interface StoredRolloutWave {
  size: number;
  state: WaveState;
  /** ISO-8601: when the wave started; also the time of every deployment it makes (their ids' time part and `at`). */
  startedAt?: string;
  /** ISO-8601. */
  completedAt?: string;
  /** Indexes of its first and last chunk (inclusive). */
  chunks: [number, number];
}

/** A rollout as stored (rollouts table, `ROLLOUT#{company}` / `{id}`); key design in tables.ts. */
export interface StoredRollout {
  /** ULID. */
  id: string;
  company: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  what: RolloutWhat;
  /** How the targets were given: the search query string, or how many ids were listed. */
  targetsSpec: { query: string } | { ids: number };
  /** Devices targeted (resolved at creation). */
  targets: number;
  waves: StoredRolloutWave[];
  /** Index of the wave running, or next to run (0-based). */
  currentWave: number;
  /** 0..1. */
  failureThreshold: number;
  /** Seconds. */
  waveTimeoutSeconds: number;
  note?: string;
  /** `sub` of the creator: the deployments are made in their name. */
  createdBy: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
  state: RolloutState;
  pausedReason?: string;
  /** Optimistic lock: incremented by every write of the rollout item (RolloutRepository.update). */
  version: number;
  /** ISO-8601: while RUNNING, when the sweeper looks at it next (the item is in the sweep index only while RUNNING). */
  sweepAt?: string;
}

/** A chunk of a rollout's targets (rollouts table, `TARGETS#{company}#{rolloutId}` / `{index, 6 digits}`). */
export interface RolloutChunk {
  /** 0-based, global across the waves. */
  index: number;
  /** The wave it belongs to (0-based). */
  wave: number;
  /** At most ROLLOUT_CHUNK_SIZE device ids, sorted. */
  deviceIds: string[];
  /** ISO-8601: when its work message was last sent again (absent: sent when its wave started). */
  dispatchedAt?: string;
  /** Set once the worker has run it (its results counted). */
  done?: boolean;
  /** Its deploy results by cause (`SUCCESS` for a write made), once done. */
  results?: Record<string, number>;
}

/** The tallies of one wave: deploy results by cause, device reports by state, and how many chunks are done. */
export interface RolloutWaveTally {
  /** e.g. `{ SUCCESS: 480, TARGET_NOT_FOUND: 20, INSTALLED: 470, FAILED: 3 }`; absent keys are 0. */
  counts: Record<string, number>;
  chunksDone: number;
}

/** A device's terminal status report on a deployment a rollout made. */
export interface RolloutReport {
  company: string;
  rolloutId: string;
  /** The wave that deployed it (0-based). */
  wave: number;
  deviceId: string;
  state: 'INSTALLED' | 'FAILED';
  /** ISO-8601: when the service received the report. */
  at: string;
}

/** Rollouts, their target chunks and their wave tallies (rollouts table). */
export interface RolloutRepository {
  /**
   * Writes the target chunks (batched puts), then the rollout item (a conditional put: only if new) last, so that a
   * crash in between leaves only chunks no rollout refers to.
   * @throws Error when a write fails (nothing refers to what was written).
   */
  create(rollout: StoredRollout, chunks: readonly RolloutChunk[]): Promise<void>;
  /** The rollout (a strongly consistent read), or undefined. */
  get(company: string, rolloutId: string): Promise<StoredRollout | undefined>;
  /**
   * Replaces the rollout item only if its stored `version` is `rollout.version - 1` (optimistic lock: the caller read
   * version n and writes n + 1). A RUNNING rollout enters (or stays in) the sweep index at `sweepAt`; others leave it.
   * @returns false when another write came first (nothing written).
   */
  update(rollout: StoredRollout): Promise<boolean>;
  /** A company's rollouts, newest first. @throws BadRequestError on a cursor this listing did not issue. */
  list(company: string, limit: number, cursor: string | undefined): Promise<Page<StoredRollout>>;
  /** One chunk with its device ids (strongly consistent), or undefined. */
  chunk(company: string, rolloutId: string, index: number): Promise<RolloutChunk | undefined>;
  /** Chunks `first`..`last` (inclusive) without their device ids (`deviceIds` empty), in index order. */
  chunkStates(company: string, rolloutId: string, first: number, last: number): Promise<RolloutChunk[]>;
  /** Sets `dispatchedAt` on the chunks not done yet (absent ones are ignored). */
  markDispatched(company: string, rolloutId: string, indexes: readonly number[], at: string): Promise<void>;
  /**
   * Marks a chunk done with its results and adds them (and one done chunk) to its wave's tally, in one transaction,
   * only if the chunk is not done yet. @returns false when it was (nothing counted twice).
   */
  markDone(
    company: string,
    rolloutId: string,
    chunk: Pick<RolloutChunk, 'index' | 'wave'>,
    results: Record<string, number>,
  ): Promise<boolean>;
  /** Every wave's tally (waves without any are absent), by wave index. */
  tallies(company: string, rolloutId: string): Promise<Map<number, RolloutWaveTally>>;
  /**
   * Counts a device's terminal report once per rollout: records that the device reported and adds 1 to its wave's
   * `INSTALLED` or `FAILED`, in one transaction, only if the device has not reported in this rollout before.
   * @returns false when it had (a redelivered stream record, or a later report: nothing counted).
   */
  recordReport(report: RolloutReport): Promise<boolean>;
  /** RUNNING rollouts whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by an index query (no scan). */
  due(now: string, limit: number): Promise<{ company: string; rolloutId: string }[]>;
}

/** The body of a rollout work message (SQS body JSON, and the local queue's): one chunk of a wave to run. */
export interface RolloutWorkMessage {
  type: 'RolloutChunk';
  company: string;
  rolloutId: string;
  /** 0-based. */
  wave: number;
  /** The chunk's index. */
  chunk: number;
}

/** The queue of rollout work (SQS on AWS, the local runtime's in-process queue locally). */
export interface WorkQueue {
  /**
   * Sends the messages (in batches); delivery is at least once, in no particular order.
   * @throws Error naming how many messages could not be sent after retries.
   */
  send(messages: readonly RolloutWorkMessage[]): Promise<void>;
}
