/**
 * The history of one deployment request that names the same (device, scenario, version) more than once, on DynamoDB
 * Local with the real deployment repository, history reader and the deployments table's stream read by the local
 * stream poller into the deployment-changes rules (core/deployments/changes.ts), as `npm start` runs them: every
 * entry of the request is one attempted action, so each gets its own history entry (the SUCCESS from the stream, the
 * FAILURE written by the request), none merged into another.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../functions/adapters/aws/clients.js';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeploymentHistory } from '../../../functions/adapters/aws/dynamodb-deployment-history.js';
import { DynamoDbDeploymentRepository } from '../../../functions/adapters/aws/dynamodb-deployment-repository.js';
import { deploymentSlotFromImage, type StreamImage } from '../../../functions/adapters/aws/stream-images.js';
import { applyDeploymentChanges, deploymentChangeOf } from '../../../functions/core/deployments/changes.js';
import { type DeploymentRequestBody, executeDeployments } from '../../../functions/core/deployments/deployments.js';
import { listDeploymentHistory } from '../../../functions/core/deployments/history.js';
import type { DeploymentEvent } from '../../../functions/core/deployments/model.js';
import type { DeviceRepository } from '../../../functions/core/devices/ports.js';
import type { ScenarioRepository } from '../../../functions/core/scenarios/ports.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { DynamoDbStreamPoller } from '../../../functions/local/stream-poller.js';
import { ensureTables } from '../../../functions/local/tables.js';

const COMPANY = 'acme';
const D1 = 'acme-kiosk-0020';
const D2 = 'acme-kiosk-0021';
const SCENARIO = 'acme-welcome';

const fakeDevices = {
  existing: async (_company: string, ids: readonly string[]) => new Set(ids.filter((id) => id !== 'acme-no-such-kiosk')),
} as unknown as DeviceRepository;
const fakeScenarios = {
  existingVersions: async (_company: string, references: readonly { scenarioId: string; version: string }[]) =>
    new Set(references.filter((ref) => ref.version !== '9.9.9').map((ref) => `${ref.scenarioId}#${ref.version}`)),
} as unknown as ScenarioRepository;

let directory: string;
let dynamo: DynamoDbLocal;
let client: DynamoDBDocumentClient;
let streams: DynamoDBStreamsClient;
let poller: DynamoDbStreamPoller;
let deployments: DynamoDbDeploymentRepository;
let history: DynamoDbDeploymentHistory;
const published: DeploymentEvent[] = [];
const errors: unknown[] = [];

const alice: Principal = { subject: 'alice', companies: [COMPANY], scopes: new Set(['deployments:write', 'deployments:read']) };

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'history-repeated-'));
  dynamo = await startDynamoDbLocal({ dataDirectory: directory, port: await freePort() });
  const admin = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const streamArns = await ensureTables(admin, LOCAL_TABLES);
  admin.destroy();
  client = createDocumentClient(dynamo.endpoint);
  const cursors = new CursorCodec(() => Buffer.alloc(32, 3));
  deployments = new DynamoDbDeploymentRepository(client, LOCAL_TABLES, cursors);
  history = new DynamoDbDeploymentHistory(client, LOCAL_TABLES, cursors);
  streams = new DynamoDBStreamsClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  // What functions/handlers/deployment-changes.ts does with a batch, minus the desired state tags (devices table).
  poller = new DynamoDbStreamPoller(streams, streamArns['deployment-changes'], async (event) => {
    const changes = event.Records.flatMap(
      (record) =>
        deploymentChangeOf(
          deploymentSlotFromImage(record.dynamodb?.OldImage as StreamImage),
          deploymentSlotFromImage(record.dynamodb?.NewImage as StreamImage),
        ) ?? [],
    );
    await applyDeploymentChanges({ deployments, events: { publish: async (events) => void published.push(...events) } }, changes);
  });
  await poller.resumeAfter(new Map());
}, 90_000);

afterAll(async () => {
  await poller?.stop();
  streams?.destroy();
  client?.destroy();
  await dynamo?.stop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Hands every stream record written so far to the consumer. */
async function drainStream(): Promise<void> {
  const since = performance.now();
  while (!poller.caughtUpSince(since)) {
    await poller.pollOnce();
    await new Promise((done) => setTimeout(done, 20));
  }
}

function deploy(entries: [device: string, version: string, action: 'DEPLOY' | 'UNDEPLOY'][], note: string) {
  const body: DeploymentRequestBody = {
    requests: entries.map(([id, subId, action]) => ({
      target: { type: 'DEVICE', id },
      what: { type: 'SCENARIO', id: SCENARIO, subId },
      action,
    })),
    note,
  };
  return executeDeployments(
    { devices: fakeDevices, scenarios: fakeScenarios, deployments, onError: (error) => errors.push(error) },
    alice,
    COMPANY,
    body,
  );
}

async function allHistory() {
  return (await listDeploymentHistory({ history }, alice, COMPANY, { limit: 1000 })).items;
}

describe('the history of a request naming one (device, scenario, version) twice', () => {
  it('has one entry per entry of the request: the SUCCESS and the ALREADY_DEPLOYED, each under its own id', async () => {
    const first = await deploy(
      [
        [D1, '1.0.0', 'DEPLOY'],
        [D2, '1.0.0', 'DEPLOY'],
        [D1, '1.0.0', 'DEPLOY'],
      ],
      'first batch',
    );
    expect(first.items.map((item) => [item.state, item.cause])).toEqual([
      ['SUCCESS', null],
      ['SUCCESS', null],
      ['FAILURE', 'ALREADY_DEPLOYED'],
    ]);
    const second = await deploy(
      [
        [D1, '1.1.0', 'DEPLOY'],
        [D2, '1.0.0', 'UNDEPLOY'],
      ],
      'second batch',
    );
    const third = await deploy(
      [
        [D2, '1.1.0', 'DEPLOY'],
        ['acme-no-such-kiosk', '1.0.0', 'DEPLOY'],
      ],
      'third batch',
    );
    await drainStream();
    const entries = await allHistory();
    const made = [...first.items, ...second.items, ...third.items];
    expect(entries.map((entry) => entry.id).sort()).toEqual(made.map((item) => item.id).sort());
    expect(entries).toHaveLength(7);
    const d1 = entries.filter((entry) => entry.target.id === D1 && entry.what.subId === '1.0.0');
    expect(d1.map((entry) => entry.kind === 'ACTION' && [entry.id, entry.state, entry.cause])).toEqual([
      [first.items[2]?.id, 'FAILURE', 'ALREADY_DEPLOYED'],
      [first.items[0]?.id, 'SUCCESS', null],
    ]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('has one entry per change when one slot changes several times in one request, and one event per change', async () => {
    const D3 = 'acme-kiosk-0022';
    const answer = await deploy(
      [
        [D3, '2.0.0', 'DEPLOY'],
        [D3, '2.0.0', 'UNDEPLOY'],
        [D3, '2.0.0', 'DEPLOY'],
        [D3, '2.0.0', 'DEPLOY'],
        [D3, '2.0.0', 'UNDEPLOY'],
        [D3, '2.0.0', 'UNDEPLOY'],
      ],
      'back and forth',
    );
    expect(answer.items.map((item) => item.cause)).toEqual([null, null, null, 'ALREADY_DEPLOYED', null, 'ALREADY_UNDEPLOYED']);
    await drainStream();
    const entries = (await listDeploymentHistory({ history }, alice, COMPANY, { deviceId: D3, limit: 1000 })).items;
    // Newest first: the request's entries in reverse order, each under its result item's id.
    expect(entries.map((entry) => entry.kind === 'ACTION' && [entry.id, entry.action, entry.state, entry.cause])).toEqual(
      answer.items.map((item) => [item.id, item.action, item.state, item.cause]).reverse(),
    );
    const changed = answer.items.filter((item) => item.state === 'SUCCESS').map((item) => item.id);
    expect(
      published.filter((event) => event.deviceId === D3).map((event) => event.type === 'DeploymentChanged' && event.deploymentId),
    ).toEqual(changed);
    expect(await deployments.listActive(COMPANY, D3, 10, undefined)).toEqual({ items: [], nextCursor: null });
    expect(errors).toEqual([]);
  }, 60_000);
});
