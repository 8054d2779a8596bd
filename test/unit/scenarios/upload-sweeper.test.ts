/**
 * The upload sweeper and the paths it cleans up after, on DynamoDB Local (the real repositories, their conditional
 * writes and the `sweep` index) with an in-memory archive store and an injected clock. A "killed" process is a call
 * that never returns after its write: nothing after it runs, exactly as when Lambda is stopped.
 */
import { Readable } from 'node:stream';
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbCompanyRepository } from '../../../functions/adapters/aws/dynamodb-company-repository.js';
import { DynamoDbScenarioRepository } from '../../../functions/adapters/aws/dynamodb-scenario-repository.js';
import { DynamoDbUploadSlotRepository } from '../../../functions/adapters/aws/dynamodb-upload-slot-repository.js';
import type { ArchiveStore, RandomAccessSource } from '../../../functions/core/scenarios/ports.js';
import {
  getUploadSlot,
  PROCESSING_CLAIM_TIMEOUT_MS,
  type PresignedUploadDependencies,
  processUploadedArchive,
  requestUploadSlot,
} from '../../../functions/core/scenarios/presigned-upload.js';
import { STAGED_ARCHIVE_TIMEOUT_MS, UploadAbandonedError, uploadScenario } from '../../../functions/core/scenarios/upload.js';
import { sweepUploads } from '../../../functions/core/scenarios/upload-sweeper.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { buildDemoScenarioArchive, DEMO_SCENARIOS } from '../../../functions/local/seed.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { useLocalTables } from '../../support/local-tables.js';

const START = Date.parse('2031-03-01T08:00:00.000Z');
const MINUTE = 60_000;
const never = () => new Promise<never>(() => undefined);

/**
 * A point in a call the test starts without awaiting it: `mark` is called there, and `reached` resolves then. The test
 * waits for the point itself, however long the writes before it take.
 */
function checkpoint(): { reached: Promise<void>; mark: () => void } {
  let mark: () => void = () => undefined;
  const reached = new Promise<void>((done) => {
    mark = done;
  });
  return { reached, mark };
}

/** S3 in a Map: last-modified is the injected clock at the write. */
class MemoryArchives implements ArchiveStore {
  readonly objects = new Map<string, { body: Uint8Array; lastModified: string }>();
  constructor(private readonly clock: () => Date) {}
  async put(key: string, body: Uint8Array): Promise<void> {
    this.objects.set(key, { body, lastModified: this.clock().toISOString() });
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.objects.get(key)?.body;
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async stat(key: string): Promise<{ size: number; lastModified: string } | undefined> {
    const object = this.objects.get(key);
    return object === undefined ? undefined : { size: object.body.byteLength, lastModified: object.lastModified };
  }
  async copy(sourceKey: string, targetKey: string): Promise<void> {
    const source = this.objects.get(sourceKey);
    if (source === undefined) throw new Error(`NoSuchKey ${sourceKey}`);
    this.objects.set(targetKey, { body: source.body, lastModified: this.clock().toISOString() });
  }
  async openRandomAccess(key: string): Promise<RandomAccessSource | undefined> {
    const object = this.objects.get(key);
    if (object === undefined) return undefined;
    return {
      size: object.body.byteLength,
      createReadStream: (start, end) => Readable.from([Buffer.from(object.body.subarray(start, end))]),
    };
  }
  async presignGet(key: string): Promise<string> {
    return `memory://${key}`;
  }
  async presignPut(key: string): Promise<string> {
    return `memory://${key}`;
  }
  keys(prefix: string): string[] {
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix));
  }
}

let client: DynamoDBDocumentClient;
let clock: Date;
let archives: MemoryArchives;
let dependencies: PresignedUploadDependencies;
let company: string;
let companyCount = 0;
const alice: () => Principal = () => ({ subject: 'alice', companies: [company], scopes: new Set(['scenarios:read', 'scenarios:write']) });
const now = () => clock;
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const sweep = () => sweepUploads({ ...dependencies, now });
const archive = (version: string) => buildDemoScenarioArchive(DEMO_SCENARIOS[0], version);
const usedBytes = async () => (await dependencies.companies.get(company))?.usedBytes;
const versions = async () =>
  (
    await client.send(
      new QueryCommand({
        TableName: LOCAL_TABLES.scenarios,
        KeyConditionExpression: 'company = :c AND begins_with(sk, :v)',
        ExpressionAttributeValues: { ':c': company, ':v': 'VERSION#' },
      }),
    )
  ).Items ?? [];

/** A granted slot whose archive was PUT at the current clock. */
async function slotWithObject(version: string) {
  const grant = await requestUploadSlot(dependencies, alice(), company);
  const objectKey = `uploads/${company}/${grant.uploadId}.zip`;
  await archives.put(objectKey, await archive(version));
  return { grant, objectKey };
}

const localTables = useLocalTables('upload-sweeper-');

beforeEach(async () => {
  client = localTables();
  // Each test has its own company (the sweep index is shared: earlier tests leave nothing open in it).
  companyCount += 1;
  company = `sweep-${companyCount}`;
  clock = new Date(START + companyCount * 24 * 60 * MINUTE);
  archives = new MemoryArchives(now);
  const companies = new DynamoDbCompanyRepository(client, LOCAL_TABLES);
  await companies.put([{ id: company, name: company, quotaBytes: 10 * 1024 * 1024, usedBytes: 0 }]);
  dependencies = {
    companies,
    scenarios: new DynamoDbScenarioRepository(client, LOCAL_TABLES),
    archives,
    uploads: new DynamoDbUploadSlotRepository(client, LOCAL_TABLES),
    now,
    problemOf,
  };
});

describe('upload sweeper', () => {
  it('rejects a slot that got no archive before its expiresAt with reason expired, and only after that', async () => {
    const grant = await requestUploadSlot({ ...dependencies, urlLifetimeSeconds: 60 }, alice(), company);
    advance(59_000);
    expect((await sweep()).expired).toEqual([]);
    expect((await getUploadSlot(dependencies, alice(), company, grant.uploadId)).status).toBe('PENDING');

    advance(1_000);
    expect((await sweep()).expired).toEqual([grant.uploadId]);
    const view = await getUploadSlot(dependencies, alice(), company, grant.uploadId);
    expect(view).toMatchObject({ status: 'REJECTED', problem: { status: 410, title: 'Upload Not Completed', reason: 'expired' } });
    expect(view.problem?.detail).toMatch(/No archive arrived before the upload slot expired.*Request a new upload slot/);
    // Finished slots leave the sweep index: the next run has nothing to do.
    advance(MINUTE);
    expect(await sweep()).toEqual({ expired: [], interrupted: [], waiting: [], orphansDeleted: [] });
  }, 30_000);

  it('rejects an upload killed during validation (PROCESSING forever) as interrupted and deletes its object', async () => {
    const { grant, objectKey } = await slotWithObject('1.0.0');
    // The archive's reads never finish: validation hangs, as when the function is killed mid-way.
    const validating = checkpoint();
    const hanging: ArchiveStore = Object.assign(Object.create(archives) as MemoryArchives, {
      openRandomAccess: async (key: string) => {
        validating.mark();
        return { size: (await archives.stat(key))?.size ?? 0, createReadStream: () => new Readable({ read() {} }) };
      },
    });
    void processUploadedArchive({ ...dependencies, archives: hanging }, objectKey, clock.toISOString());
    await validating.reached;
    expect((await getUploadSlot(dependencies, alice(), company, grant.uploadId)).status).toBe('PENDING');

    advance(PROCESSING_CLAIM_TIMEOUT_MS - 1_000);
    expect((await sweep()).interrupted).toEqual([]);
    advance(1_000);
    expect((await sweep()).interrupted).toEqual([grant.uploadId]);
    expect(await getUploadSlot(dependencies, alice(), company, grant.uploadId)).toMatchObject({
      status: 'REJECTED',
      problem: { status: 410, reason: 'interrupted' },
    });
    expect(archives.keys('uploads/')).toEqual([]);
    expect(await usedBytes()).toBe(0);
  }, 30_000);

  it('a validation that finishes after the sweeper rejected its slot records nothing and charges nothing', async () => {
    const { grant, objectKey } = await slotWithObject('1.0.0');
    let release: () => void = () => undefined;
    const gate = new Promise<void>((done) => {
      release = done;
    });
    const copied = checkpoint();
    const slow: ArchiveStore = Object.assign(Object.create(archives) as MemoryArchives, {
      // Validation takes 10 minutes; the copy to the final key then stalls until released.
      openRandomAccess: async (key: string) => {
        const source = await archives.openRandomAccess(key);
        advance(10 * MINUTE);
        return source;
      },
      copy: async (source: string, target: string) => {
        await archives.copy(source, target);
        copied.mark();
        await gate;
      },
    });
    const late = processUploadedArchive({ ...dependencies, archives: slow }, objectKey, clock.toISOString());
    await copied.reached;
    expect(archives.keys('companies/')).toHaveLength(1);
    advance(PROCESSING_CLAIM_TIMEOUT_MS - 10 * MINUTE);
    // The claim is overdue, the staged copy (made 10 minutes after the claim) not yet.
    expect(await sweep()).toMatchObject({ interrupted: [grant.uploadId], orphansDeleted: [] });

    // The slow processor goes on: its version transaction needs the slot still PROCESSING under its claim.
    release();
    expect(await late).toBe('IGNORED');
    expect(await getUploadSlot(dependencies, alice(), company, grant.uploadId)).toMatchObject({
      status: 'REJECTED',
      problem: { reason: 'interrupted' },
    });
    expect(await versions()).toEqual([]);
    expect(await usedBytes()).toBe(0);
    expect(archives.keys('')).toEqual([]);
    advance(STAGED_ARCHIVE_TIMEOUT_MS);
    expect(await sweep()).toEqual({ expired: [], interrupted: [], waiting: [], orphansDeleted: [] });
  }, 30_000);

  it('never overwrites a real outcome: a stale rejection of a slot that was STORED meanwhile does not apply', async () => {
    const { grant, objectKey } = await slotWithObject('1.0.0');
    const overdueBefore = await dependencies.uploads.overdue(new Date(clock.getTime() + 2 * PROCESSING_CLAIM_TIMEOUT_MS).toISOString(), 10);
    expect(overdueBefore.map((slot) => slot.uploadId)).toContain(grant.uploadId);
    expect(await processUploadedArchive(dependencies, objectKey, clock.toISOString())).toBe('STORED');
    const stored = await dependencies.uploads.get(company, grant.uploadId);
    expect(await dependencies.uploads.reject(company, grant.uploadId, { status: 'PENDING' }, { reason: 'expired' })).toBe(false);
    expect(
      await dependencies.uploads.reject(
        company,
        grant.uploadId,
        { status: 'PROCESSING', claimedAt: stored?.claimedAt ?? '' },
        { reason: 'interrupted' },
      ),
    ).toBe(false);
    advance(2 * PROCESSING_CLAIM_TIMEOUT_MS);
    expect(await sweep()).toEqual({ expired: [], interrupted: [], waiting: [], orphansDeleted: [] });
    expect(await getUploadSlot(dependencies, alice(), company, grant.uploadId)).toMatchObject({
      status: 'STORED',
      result: { version: '1.0.0' },
    });
    expect(archives.keys('companies/')).toHaveLength(1);
  }, 30_000);

  it('waits for the event of an archive that arrived in time, then rejects it as interrupted if it never came', async () => {
    const grant = await requestUploadSlot({ ...dependencies, urlLifetimeSeconds: 60 }, alice(), company);
    advance(30_000);
    await archives.put(`uploads/${company}/${grant.uploadId}.zip`, await archive('1.0.0'));
    advance(30_000);
    expect(await sweep()).toMatchObject({ expired: [], waiting: [grant.uploadId] });
    advance(PROCESSING_CLAIM_TIMEOUT_MS - 30_000);
    expect(await sweep()).toMatchObject({ interrupted: [grant.uploadId], waiting: [] });
    expect((await getUploadSlot(dependencies, alice(), company, grant.uploadId)).problem).toMatchObject({ reason: 'interrupted' });
    expect(archives.keys('uploads/')).toEqual([]);
  }, 30_000);
});

describe('archives arriving after the slot expired', () => {
  it('rejects the archive as expired and deletes it, without validating or storing it', async () => {
    const grant = await requestUploadSlot({ ...dependencies, urlLifetimeSeconds: 60 }, alice(), company);
    advance(61_000);
    const objectKey = `uploads/${company}/${grant.uploadId}.zip`;
    await archives.put(objectKey, await archive('1.0.0'));
    expect(await processUploadedArchive(dependencies, objectKey, clock.toISOString())).toBe('REJECTED');
    const view = await getUploadSlot(dependencies, alice(), company, grant.uploadId);
    expect(view).toMatchObject({ status: 'REJECTED', problem: { status: 410, reason: 'expired' } });
    expect(view.problem?.detail).toMatch(/arrived at .*after the upload slot expired/);
    expect(archives.keys('')).toEqual([]);
    expect(await versions()).toEqual([]);
    expect(await usedBytes()).toBe(0);
  }, 30_000);

  it('still stores an archive that arrived in time even when its event is handled after expiresAt', async () => {
    const grant = await requestUploadSlot({ ...dependencies, urlLifetimeSeconds: 60 }, alice(), company);
    const objectKey = `uploads/${company}/${grant.uploadId}.zip`;
    await archives.put(objectKey, await archive('1.0.0'));
    const arrivedAt = clock.toISOString();
    advance(5 * MINUTE);
    expect(await processUploadedArchive(dependencies, objectKey, arrivedAt)).toBe('STORED');
  }, 30_000);
});

describe('archives written without their version record', () => {
  it('deletes the archive of a direct upload killed between storing it and recording its version, after the deadline', async () => {
    const stored = checkpoint();
    const killed: ArchiveStore = Object.assign(Object.create(archives) as MemoryArchives, {
      put: async (key: string, body: Uint8Array) => {
        await archives.put(key, body);
        stored.mark();
        return never();
      },
    });
    void uploadScenario({ ...dependencies, archives: killed }, alice(), company, await archive('1.0.0'));
    await stored.reached;
    const [orphan] = archives.keys('companies/');
    expect(orphan).toMatch(new RegExp(`^companies/${company}/scenarios/acme-welcome/1\\.0\\.0/[0-9A-Z]{26}\\.zip$`));

    advance(STAGED_ARCHIVE_TIMEOUT_MS - 1_000);
    expect((await sweep()).orphansDeleted).toEqual([]);
    advance(1_000);
    expect((await sweep()).orphansDeleted).toEqual([orphan]);
    expect(archives.keys('companies/')).toEqual([]);
    expect(await versions()).toEqual([]);
    expect(await usedBytes()).toBe(0);
    expect((await sweep()).orphansDeleted).toEqual([]);
  }, 30_000);

  it('deletes the copy of a presigned upload killed after copying it, and rejects the slot as interrupted', async () => {
    const { grant, objectKey } = await slotWithObject('1.0.0');
    const copied = checkpoint();
    const killed: ArchiveStore = Object.assign(Object.create(archives) as MemoryArchives, {
      copy: async (source: string, target: string) => {
        await archives.copy(source, target);
        copied.mark();
        return never();
      },
    });
    void processUploadedArchive({ ...dependencies, archives: killed }, objectKey, clock.toISOString());
    await copied.reached;
    const [orphan] = archives.keys('companies/');
    expect(orphan).toBeDefined();

    advance(PROCESSING_CLAIM_TIMEOUT_MS);
    expect(await sweep()).toMatchObject({ interrupted: [grant.uploadId], orphansDeleted: [orphan] });
    expect(archives.keys('')).toEqual([]);
    expect(await versions()).toEqual([]);
    expect(await usedBytes()).toBe(0);
  }, 30_000);

  it('a version recorded after the sweeper abandoned its staged archive is refused, so no record points to a deleted object', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((done) => {
      release = done;
    });
    const stored = checkpoint();
    const slow: ArchiveStore = Object.assign(Object.create(archives) as MemoryArchives, {
      put: async (key: string, body: Uint8Array) => {
        await archives.put(key, body);
        stored.mark();
        await gate;
      },
    });
    const upload = uploadScenario({ ...dependencies, archives: slow }, alice(), company, await archive('1.0.0'));
    await stored.reached;
    advance(STAGED_ARCHIVE_TIMEOUT_MS);
    expect((await sweep()).orphansDeleted).toHaveLength(1);
    release();
    await expect(upload).rejects.toBeInstanceOf(UploadAbandonedError);
    expect(await versions()).toEqual([]);
    expect(await usedBytes()).toBe(0);
    expect(archives.keys('companies/')).toEqual([]);
  }, 30_000);

  it('a finished upload leaves nothing for the sweeper', async () => {
    const stored = await uploadScenario(dependencies, alice(), company, await archive('1.0.0'));
    advance(2 * STAGED_ARCHIVE_TIMEOUT_MS);
    expect(await sweep()).toEqual({ expired: [], interrupted: [], waiting: [], orphansDeleted: [] });
    expect(archives.keys('companies/')).toHaveLength(1);
    expect(await usedBytes()).toBe(stored.size);
  }, 30_000);
});
