/**
 * The device registry: operators register devices (one by one or in bulk), read and delete them, and issue each its
 * client credentials (docs/contract.md, "Devices"). The device's own reports (health, connection) are written by the
 * device side, never here.
 */

import pLimit from 'p-limit';
import { monotonicFactory } from 'ulid';
import type { CommandRepository } from '../commands/ports.js';
import type { UndeployMark } from '../deployments/model.js';
import type { DeploymentRepository } from '../deployments/ports.js';
import { type DeviceDocument, deviceDocumentOf } from '../search/documents.js';
import { BadRequestError, ConflictError, NotFoundError, type ProblemViolation } from '../shared/errors.js';
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { type Device, deviceClientId, type StoredDevice } from './model.js';
import type { DeviceRepository, DeviceStaticFields, PresenceRepository } from './ports.js';
import { newDeviceCredential } from './tokens.js';

/** Most entries one bulk registration accepts. */
export const MAX_REGISTRATION_ENTRIES = 5_000;
/** Conditional writes in flight at once for one bulk registration (and undeploys for one delete). */
export const REGISTRY_WRITE_CONCURRENCY = 16;
/** Active deployments read per page while a delete undeploys them. */
const UNDEPLOY_PAGE_SIZE = 1_000;

/** What the registry use cases need. */
export interface DeviceRegistryDependencies {
  devices: Omit<DeviceRepository, 'recordHealth'>;
  deployments: Pick<DeploymentRepository, 'listActive' | 'deactivate'>;
  presence: Pick<PresenceRepository, 'forget'>;
  now?: () => Date;
  /** Called with each unexpected backend error of a bulk entry (the entry is then reported FAILURE). */
  onError?: (error: unknown, context: Record<string, unknown>) => void;
}

/** What registering devices needs besides the registry's ports. */
export interface DeviceRegistrationDependencies extends DeviceRegistryDependencies {
  /**
   * Ids no device may have: the literal path segments the API uses after `resources/` (`DEVICE`, `devices`,
   * `deployments`, `scenarios`, …), derived from the route definitions (RESERVED_DEVICE_IDS of the contract), because
   * `…/resources/{deviceId}/deployments` would then name another route's path. Compared exactly, as API Gateway
   * matches paths case-sensitively.
   */
  reservedIds: ReadonlySet<string>;
}

/** A bulk registration entry: a device id and the static fields to set. */
export interface DeviceRegistration extends DeviceStaticFields {
  id: string;
}

/** A bulk registration entry its schema refused: its violations (JSON pointers inside the entry) and id, if any. */
export interface InvalidRegistration {
  invalid: ProblemViolation[];
  /** The entry's `id` when it is a string, else null. */
  id: string | null;
}

/** The outcome of one bulk registration entry, in request order. */
export interface RegistrationResult {
  id: string | null;
  state: 'CREATED' | 'UPDATED' | 'FAILURE';
  /** Why a FAILURE failed, as JSON pointers into the request body (`/3/serial`). */
  errors?: ProblemViolation[];
}

const nextUlid = monotonicFactory();

/** A device being deleted refuses every change: it is about to disappear. */
const BEING_DELETED = 'The device is being deleted; register it again once the delete has completed.';

/**
 * Registers the device or sets its static fields (members absent from `fields` are kept; `location` and
 * `geoLocation`, when given, replace the stored ones whole). A new device has `connection.state` UNKNOWN and no health.
 * @param creationRefused set when the id may not be given to a new device (a reserved id): the device is then only
 *   updated if it exists (one registered before the id was reserved), else this violation is thrown.
 * @throws BadRequestError (path `/serial`) when the device is new and `fields` has no serial, or with
 *   `creationRefused` when the device is new and may not be created.
 * @throws ConflictError when the device is being deleted.
 */
async function register(
  dependencies: DeviceRegistryDependencies,
  companyId: string,
  deviceId: string,
  fields: DeviceStaticFields,
  creationRefused?: ProblemViolation,
): Promise<{ created: boolean; device: DeviceDocument }> {
  const now = (dependencies.now?.() ?? new Date()).toISOString();
  // Create first when a serial allows it (registering a fleet creates); each write is conditional, so a device
  // created or deleted in between is found by the other write. Two rounds cover any single interleaving.
  for (let round = 0; round < 2; round += 1) {
    if (fields.serial !== undefined && creationRefused === undefined) {
      const device: Device = {
        id: deviceId,
        company: companyId,
        serial: fields.serial,
        created: now,
        updated: now,
        ...(fields.location === undefined ? {} : { location: fields.location }),
        ...(fields.geoLocation === undefined ? {} : { geoLocation: fields.geoLocation }),
        connection: { state: 'UNKNOWN' },
      };
      if (await dependencies.devices.create(device)) return { created: true, device: deviceDocumentOf(device) };
    }
    const updated = await dependencies.devices.update(companyId, deviceId, fields, now);
    if (updated !== undefined) return { created: false, device: deviceDocumentOf(updated) };
    const stored = await dependencies.devices.get(companyId, deviceId);
    if (stored?.deleting === true) throw new ConflictError(BEING_DELETED);
    const refusal = stored === undefined ? newDeviceRefusal(fields, creationRefused) : undefined;
    if (refusal !== undefined) throw refusal;
  }
  throw new ConflictError('The device changed while it was being registered; send the request again.');
}

/**
 * Why a device that does not exist cannot be created from `fields`: `creationRefused` (a reserved id), else a missing
 * serial; undefined when it can.
 */
function newDeviceRefusal(fields: DeviceStaticFields, creationRefused: ProblemViolation | undefined): BadRequestError | undefined {
  if (creationRefused !== undefined) return new BadRequestError(creationRefused.message, [creationRefused]);
  if (fields.serial === undefined) {
    return new BadRequestError('A new device needs a serial.', [{ path: '/serial', message: 'Required to register a new device.' }]);
  }
  return undefined;
}

/**
 * PUT a device: registers it (created: true) or sets its static fields (see `register`).
 * @throws ForbiddenError for a company outside the token; BadRequestError for an id that is not a
 *   device id, a reserved id (reservedIdRefusal) of a device that does not exist yet, or a new device without a
 *   serial; ConflictError when the device is being deleted.
 */
export async function putDevice(
  dependencies: DeviceRegistrationDependencies,
  principal: Principal,
  companyId: string,
  deviceId: string,
  fields: DeviceStaticFields,
): Promise<{ created: boolean; device: DeviceDocument }> {
  authorizeCompany(principal, companyId);
  if (!IDENTIFIER_PATTERN.test(deviceId)) {
    throw new BadRequestError(`'${deviceId.slice(0, 128)}' is not a device id.`, [{ path: 'deviceId', message: DEVICE_ID_RULE }]);
  }
  const refusal = reservedIdRefusal(deviceId, dependencies.reservedIds);
  return register(dependencies, companyId, deviceId, fields, refusal === undefined ? undefined : { path: 'deviceId', message: refusal });
}

/** What a device id may be, in words (IDENTIFIER_PATTERN). */
export const DEVICE_ID_RULE = 'A device id is 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit.';

/**
 * Why a new device cannot have `deviceId` (a message naming it), or undefined when it can: the id is one of
 * `reservedIds` (a path segment of the API). A device registered with such an id before it was reserved keeps it: it
 * can still be updated, read and deleted.
 */
export function reservedIdRefusal(deviceId: string, reservedIds: ReadonlySet<string>): string | undefined {
  if (!reservedIds.has(deviceId)) return undefined;
  return `'${deviceId}' cannot be a new device's id: the API uses it as a path segment (…/resources/${deviceId}/…), so the device's own paths would name another route. Choose another id.`;
}

/**
 * Registers or updates many devices, each entry on its own: every entry gets one result, in request order; invalid
 * entries are FAILURE with their errors and the others proceed. Entries with the same id take effect one after
 * another, in order, in one write for them all (registerRepeated); ids run REGISTRY_WRITE_CONCURRENCY at a time.
 * @throws ForbiddenError for a company outside the token.
 */
export async function registerDevices(
  dependencies: DeviceRegistrationDependencies,
  principal: Principal,
  companyId: string,
  entries: readonly (DeviceRegistration | InvalidRegistration)[],
): Promise<RegistrationResult[]> {
  authorizeCompany(principal, companyId);
  const results: RegistrationResult[] = entries.map((entry, index) =>
    'invalid' in entry
      ? { id: entry.id, state: 'FAILURE', errors: entry.invalid.map((violation) => atEntry(index, violation)) }
      : { id: entry.id, state: 'FAILURE' },
  );
  const byId = new Map<string, number[]>();
  entries.forEach((entry, index) => {
    if ('invalid' in entry) return;
    if (!IDENTIFIER_PATTERN.test(entry.id)) {
      (results[index] as RegistrationResult).errors = [{ path: `/${index}/id`, message: DEVICE_ID_RULE }];
      return;
    }
    byId.set(entry.id, [...(byId.get(entry.id) ?? []), index]);
  });
  const limit = pLimit(REGISTRY_WRITE_CONCURRENCY);
  await Promise.all(
    [...byId.values()].map((indexes) =>
      limit(async () => {
        const { id, ...fields } = entries[indexes[0] as number] as DeviceRegistration;
        const refusal = reservedIdRefusal(id, dependencies.reservedIds);
        const creationRefused = refusal === undefined ? undefined : { path: '/id', message: refusal };
        if (indexes.length === 1) {
          results[indexes[0] as number] = await registerEntry(dependencies, companyId, id, fields, indexes[0] as number, creationRefused);
          return;
        }
        const repeated = indexes.map((index) => ({ index, fields: withoutId(entries[index] as DeviceRegistration) }));
        for (const result of await registerRepeated(dependencies, companyId, id, repeated, creationRefused)) {
          results[result.index] = result.result;
        }
      }),
    ),
  );
  return results;
}

/** One bulk entry: its result, never an exception. */
async function registerEntry(
  dependencies: DeviceRegistryDependencies,
  companyId: string,
  id: string,
  fields: DeviceStaticFields,
  index: number,
  creationRefused: ProblemViolation | undefined,
): Promise<RegistrationResult> {
  try {
    const { created } = await register(dependencies, companyId, id, fields, creationRefused);
    return { id, state: created ? 'CREATED' : 'UPDATED' };
  } catch (error) {
    reportUnexpected(dependencies, companyId, id, error);
    return failedEntry(id, index, error);
  }
}

/** Reports `error` to `onError` unless it is a refusal (BadRequestError, ConflictError) the entry's result carries. */
function reportUnexpected(dependencies: DeviceRegistryDependencies, companyId: string, id: string, error: unknown): void {
  if (!(error instanceof BadRequestError || error instanceof ConflictError)) dependencies.onError?.(error, { companyId, deviceId: id });
}

/** The FAILURE result of entry `index` whose write threw `error`. */
function failedEntry(id: string, index: number, error: unknown): RegistrationResult {
  if (error instanceof BadRequestError) {
    const violations = error.violations.length > 0 ? error.violations : [{ path: '', message: error.message }];
    return { id, state: 'FAILURE', errors: violations.map((violation) => atEntry(index, violation)) };
  }
  if (error instanceof ConflictError) return { id, state: 'FAILURE', errors: [{ path: `/${index}/id`, message: error.message }] };
  return { id, state: 'FAILURE', errors: [{ path: `/${index}`, message: 'Not written: the database failed; send this entry again.' }] };
}

/** An entry's fields without its id and without members left out (undefined), which would erase earlier ones. */
function withoutId({ id: _, ...fields }: DeviceRegistration): DeviceStaticFields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as DeviceStaticFields;
}

/**
 * The entries of one bulk registration that name the same device, in request order, as if each ran in its turn, in
 * one read and one write instead of one write per entry: a body that repeats one id 5,000 times would otherwise make
 * 5,000 writes one after another (46 s locally, beyond the 29 s an HTTP function has on AWS). While the device does
 * not exist, an entry without a serial (or any entry, for a reserved id) fails as it would alone and the first with a
 * serial creates it; the entries after it update it, later members replacing earlier ones (`location` and
 * `geoLocation` whole). The write carries what they leave: the first written entry is CREATED when the write created
 * the device, every other written entry UPDATED; a write that fails fails every written entry.
 */
async function registerRepeated(
  dependencies: DeviceRegistryDependencies,
  companyId: string,
  id: string,
  entries: readonly { index: number; fields: DeviceStaticFields }[],
  creationRefused: ProblemViolation | undefined,
): Promise<{ index: number; result: RegistrationResult }[]> {
  let stored: StoredDevice | undefined;
  try {
    stored = await dependencies.devices.get(companyId, id);
  } catch (error) {
    dependencies.onError?.(error, { companyId, deviceId: id });
    return entries.map(({ index }) => ({ index, result: failedEntry(id, index, error) }));
  }
  if (stored?.deleting === true) {
    return entries.map(({ index }) => ({ index, result: failedEntry(id, index, new ConflictError(BEING_DELETED)) }));
  }
  const outcomes: { index: number; result: RegistrationResult }[] = [];
  const written: number[] = [];
  let exists = stored !== undefined;
  let fields: DeviceStaticFields = {};
  for (const entry of entries) {
    const refusal = exists ? undefined : newDeviceRefusal(entry.fields, creationRefused);
    if (refusal !== undefined) {
      outcomes.push({ index: entry.index, result: failedEntry(id, entry.index, refusal) });
      continue;
    }
    exists = true;
    fields = { ...fields, ...entry.fields };
    written.push(entry.index);
  }
  if (written.length === 0) return outcomes;
  try {
    const { created } = await register(dependencies, companyId, id, fields, creationRefused);
    for (const index of written) outcomes.push({ index, result: { id, state: created && index === written[0] ? 'CREATED' : 'UPDATED' } });
  } catch (error) {
    reportUnexpected(dependencies, companyId, id, error);
    for (const index of written) outcomes.push({ index, result: failedEntry(id, index, error) });
  }
  return outcomes;
}

/** A violation inside entry `index`, as a pointer into the whole body. */
function atEntry(index: number, violation: ProblemViolation): ProblemViolation {
  return {
    path: `/${index}${violation.path === '' || violation.path.startsWith('/') ? violation.path : `/${violation.path}`}`,
    message: violation.message,
  };
}

/**
 * One device of the company, as the API shows it.
 * @throws ForbiddenError for a company outside the token; NotFoundError when it does not exist or is
 *   being deleted.
 */
export async function getDevice(
  dependencies: Pick<DeviceRegistryDependencies, 'devices'>,
  principal: Principal,
  companyId: string,
  deviceId: string,
): Promise<DeviceDocument> {
  authorizeCompany(principal, companyId);
  const device = await dependencies.devices.get(companyId, deviceId);
  if (device === undefined || device.deleting === true) throw notFound(deviceId);
  return deviceDocumentOf(device);
}

function notFound(deviceId: string): NotFoundError {
  return new NotFoundError(`Device '${deviceId.slice(0, 128)}' does not exist in this company.`);
}

/** What deleting a device needs besides the registry's ports: its commands, to cancel those still pending. */
export interface DeviceDeletionDependencies extends DeviceRegistryDependencies {
  commands: Pick<CommandRepository, 'pending' | 'transition'>;
}

/**
 * Deletes a device: marks it `deleting` (from then on it is absent for deployments, reads, search and its tokens),
 * undeploys each of its active deployments (an UNDEPLOY by the caller with cause DEVICE_DELETED, recorded in the
 * history like any other), cancels its pending commands (so that a device registered later under the same id is
 * never handed them; its command history stays, as its deployment history does), forgets its presence, then deletes
 * its item. Every step is idempotent, so a delete that failed half-way is completed by sending it again.
 * @throws ForbiddenError for a company outside the token; NotFoundError when the device does not exist.
 */
export async function deleteDevice(
  dependencies: DeviceDeletionDependencies,
  principal: Principal,
  companyId: string,
  deviceId: string,
): Promise<void> {
  authorizeCompany(principal, companyId);
  if (!(await dependencies.devices.markDeleting(companyId, deviceId))) throw notFound(deviceId);
  const at = (dependencies.now?.() ?? new Date()).toISOString();
  // Twice: a deployment whose existence check passed just before the mark may activate during the first pass.
  for (let pass = 0; pass < 2; pass += 1) await undeployAll(dependencies, companyId, deviceId, at, principal.subject);
  await cancelPendingCommands(dependencies.commands, companyId, deviceId, at);
  await dependencies.presence.forget(companyId, deviceId);
  await dependencies.devices.remove(companyId, deviceId);
}

/** Cancels every pending command of a device being deleted, REGISTRY_WRITE_CONCURRENCY at a time (one conditional update each). */
async function cancelPendingCommands(
  commands: DeviceDeletionDependencies['commands'],
  companyId: string,
  deviceId: string,
  at: string,
): Promise<void> {
  const limit = pLimit(REGISTRY_WRITE_CONCURRENCY);
  const pending = await commands.pending(companyId, deviceId);
  await Promise.all(
    pending.map((command) =>
      limit(() =>
        commands.transition(companyId, deviceId, command.id, {
          from: ['QUEUED', 'DELIVERED'],
          to: 'CANCELLED',
          at,
          result: { message: 'The device was deleted.' },
        }),
      ),
    ),
  );
}

/** Undeploys every active deployment of the device, REGISTRY_WRITE_CONCURRENCY at a time, page by page. */
async function undeployAll(
  dependencies: DeviceRegistryDependencies,
  companyId: string,
  deviceId: string,
  at: string,
  by: string,
): Promise<void> {
  const limit = pLimit(REGISTRY_WRITE_CONCURRENCY);
  let cursor: string | undefined;
  do {
    const page = await dependencies.deployments.listActive(companyId, deviceId, UNDEPLOY_PAGE_SIZE, cursor);
    await Promise.all(
      page.items.map((deployment) =>
        limit(() => {
          const mark: UndeployMark = { id: nextUlid(), at, by, cause: 'DEVICE_DELETED' };
          return dependencies.deployments.deactivate(deployment, mark);
        }),
      ),
    );
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/**
 * Issues new client credentials for the device: a fresh secret (256 random bits, base64url), stored only as its
 * scrypt hash with a new credential id, replacing any earlier one, whose secret and tokens stop working at once.
 * @returns the client id and the secret, which is shown this once.
 * @throws ForbiddenError for a company outside the token; NotFoundError when the device does not exist
 *   or is being deleted.
 */
export async function issueDeviceCredentials(
  dependencies: Pick<DeviceRegistryDependencies, 'devices' | 'now'>,
  principal: Principal,
  companyId: string,
  deviceId: string,
): Promise<{ clientId: string; clientSecret: string }> {
  authorizeCompany(principal, companyId);
  const created = (dependencies.now?.() ?? new Date()).toISOString();
  const { secret, credential } = await newDeviceCredential(nextUlid(), created);
  if (!(await dependencies.devices.setCredential(companyId, deviceId, credential))) throw notFound(deviceId);
  return { clientId: deviceClientId(companyId, deviceId), clientSecret: secret };
}
