/**
 * AdministrativeChange events (functions/handlers/administrative-changes.ts) on DynamoDB Local: the audit table's
 * stream, read by the local stream poller as `npm start` reads it, into the handler and the local bus: one event per
 * entry (none for the company copies), its id the entry's, and a batch delivered again (a retry, a restart) announces
 * nothing twice.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { monotonicFactory } from 'ulid';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../../functions/adapters/aws/clients.js';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbAuditLog } from '../../../functions/adapters/aws/dynamodb-audit-log.js';
import { DynamoDbCompanyRepository } from '../../../functions/adapters/aws/dynamodb-company-repository.js';
import { LocalEventBus } from '../../../functions/adapters/embedded/local-event-bus.js';
import { ENV } from '../../../functions/contract/environment.js';
import { ROLES } from '../../../functions/core/access/roles.js';
import { administrativeChangeOf } from '../../../functions/core/audit/changes.js';
import type { AuditEntry } from '../../../functions/core/audit/ports.js';
import { createCompany } from '../../../functions/core/companies/admin.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { DynamoDbStreamPoller } from '../../../functions/local/stream-poller.js';
import { ensureTables } from '../../../functions/local/tables.js';
import { callersDirectory } from '../../support/administrators.js';

const nextId = monotonicFactory();
const root: Principal = { subject: 'root', companies: [], scopes: new Set(ROLES['platform-admin']) };

let directory: string;
let eventsFile: string;
let dynamo: DynamoDbLocal;
let client: DynamoDBDocumentClient;
let streams: DynamoDBStreamsClient;
let poller: DynamoDbStreamPoller;
/** Every batch the poller delivered, as the handler got it. */
const batches: DynamoDBStreamEvent[] = [];
let handler: (event: DynamoDBStreamEvent, context: unknown) => Promise<unknown>;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'administrative-changes-'));
  eventsFile = join(directory, 'events', 'events.jsonl');
  vi.stubEnv(ENV.localEventsFile, eventsFile);
  dynamo = await startDynamoDbLocal({ dataDirectory: join(directory, 'dynamodb'), port: await freePort() });
  const admin = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const streamArns = await ensureTables(admin, LOCAL_TABLES);
  admin.destroy();
  client = createDocumentClient(dynamo.endpoint);
  streams = new DynamoDBStreamsClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  ({ handler } = (await import('../../../functions/handlers/administrative-changes.js')) as unknown as { handler: typeof handler });
  poller = new DynamoDbStreamPoller(streams, streamArns['administrative-changes'], async (event) => {
    batches.push(event);
    await handler(event, {});
  });
  await poller.resumeAfter(new Map());
}, 90_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await poller?.stop();
  streams?.destroy();
  client?.destroy();
  await dynamo?.stop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Hands every stream record written so far to the handler. */
async function drainStream(): Promise<void> {
  const since = performance.now();
  while (!poller.caughtUpSince(since)) {
    await poller.pollOnce();
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** The events in the local bus's file, in order. */
async function publishedEvents(): Promise<Record<string, unknown>[]> {
  const text = await readFile(eventsFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function entry(actor: string, companies: string[]): AuditEntry {
  return {
    id: nextId(),
    at: new Date().toISOString(),
    actor,
    action: 'user.updated',
    target: { kind: 'user', id: 'dave' },
    companies,
    before: { role: 'viewer', companies: companies.slice(0, 1) },
    after: { role: 'operator', companies },
  };
}

describe('AdministrativeChange events', () => {
  it('emits one event per recorded entry, the entry itself with its id, none for the company copies', async () => {
    const log = new DynamoDbAuditLog(client, LOCAL_TABLES.audit, new CursorCodec(() => Buffer.alloc(32, 1)));
    const moved = entry('carol', ['initech', 'umbrella']);
    await log.record(moved);
    await log.record(moved);
    const companies = new DynamoDbCompanyRepository(client, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 1)), LOCAL_TABLES.audit);
    await createCompany({ companies, users: callersDirectory({ root: { role: 'platform-admin' } }) }, root, {
      id: 'initech',
      name: 'Initech',
      quotaBytes: 1000,
    });
    await drainStream();
    const events = await publishedEvents();
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({ type: 'AdministrativeChange', ...moved });
    expect(events[1]).toMatchObject({
      type: 'AdministrativeChange',
      actor: 'root',
      action: 'company.created',
      target: { kind: 'company', id: 'initech' },
      companies: ['initech'],
      after: { id: 'initech', name: 'Initech', quotaBytes: 1000 },
    });
    expect(events[1]?.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('announces nothing twice when a batch is delivered again, in the same process or after a restart', async () => {
    const before = await publishedEvents();
    for (const batch of batches) await handler(batch, {});
    expect(await publishedEvents()).toEqual(before);
    // A restarted runtime's bus reads the file first.
    const restarted = new LocalEventBus(eventsFile);
    await restarted.publish(before.map((event) => administrativeChangeOf(event as unknown as AuditEntry)));
    expect(await publishedEvents()).toEqual(before);
  });
});
