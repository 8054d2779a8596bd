/**
 * Continuous rollouts benchmark: what the devices stream's continuous rollouts consumer adds per device change, on
 * DynamoDB Local's stream, in process (the same handler module Lambda runs, fed by the local runtime's stream poller).
 *
 * Two phases of CHANGES device writes each, read from the devices stream and handed to the handler in batches of
 * 100 (as the event source mapping and the local poller do), each call timed:
 * - baseline: a company without continuous rollouts (the handler reads its rollouts, finds none);
 * - measured: a company with ROLLOUTS running continuous rollouts, each on its own health version code; one change in
 *   JOIN_EVERY matches one of them (it joins: transaction, deployment, result), the others match none.
 * Figures: the handler's time per change in each phase, and (measured − baseline) / changes / rollouts, the time
 * the continuous rollouts add per device change per rollout (goal: at most 5 ms), with the upper bound that charges
 * the whole measured time to the rollouts. Each phase's writes are done before its stream is read, so the time is
 * the handler's alone (DynamoDB Local's reads and writes included, the stream's GetRecords not).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createDocumentClient } from '../../functions/adapters/aws/clients.js';
import { CursorCodec } from '../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbDeviceRepository } from '../../functions/adapters/aws/dynamodb-device-repository.js';
import { DynamoDbRolloutRepository } from '../../functions/adapters/aws/dynamodb-rollout-repository.js';
import { DynamoDbScenarioRepository } from '../../functions/adapters/aws/dynamodb-scenario-repository.js';
import type { Device } from '../../functions/core/devices/model.js';
import { createRollout } from '../../functions/core/rollouts/create.js';
import { startDynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { LOCAL_TABLES, localEnvironment } from '../../functions/local/runtime.js';
import { DynamoDbStreamPoller } from '../../functions/local/stream-poller.js';
import { ensureTables } from '../../functions/local/tables.js';
import { logger } from '../../functions/platform/logger.js';

/** The goal: processing the continuous rollouts add per device change per continuous rollout of the company, ms. */
export const CONTINUOUS_GOAL_MS = 5;
const ROLLOUTS = 10;
const CHANGES = Number(process.env.CONTINUOUS_BENCH_CHANGES ?? 10_000);
/** One change in this many matches a rollout (and joins it). */
const JOIN_EVERY = 10;
const SCENARIO = { type: 'SCENARIO' as const, id: 'bench-loop', subId: '1.0.0' };

/** One phase's figures. */
export interface ContinuousPhase {
  changes: number;
  /** The handler's time over the phase, ms. */
  handlerMs: number;
  /** handlerMs / changes. */
  perChangeMs: number;
  /** Devices that joined a rollout (from the handler's result in the rollouts' `joined`). */
  joined: number;
}

/** The benchmark's result. */
export interface ContinuousBenchResult {
  rollouts: number;
  baseline: ContinuousPhase;
  measured: ContinuousPhase;
  /** (measured − baseline) per change per rollout, ms. */
  addedPerChangePerRolloutMs: number;
  /** measured per change per rollout, ms: everything charged to the rollouts. */
  upperBoundPerChangePerRolloutMs: number;
  goalMs: number;
}

function device(company: string, index: number, versionCode: string): Device {
  const at = new Date().toISOString();
  return {
    id: `${company}-${String(index).padStart(6, '0')}`,
    company,
    serial: `SN-${company}-${index}`,
    created: at,
    updated: at,
    connection: { state: 'CONNECTED', connectedSince: at },
    health: { updated: at, versionCode, versionName: versionCode, mode: 'EMBEDDED_PLATFORM_ANDROID', hubs: [] },
  };
}

/** Runs the benchmark; DynamoDB Local is started in a temporary folder and stopped (the folder removed) at the end. */
export async function runContinuousBench(): Promise<ContinuousBenchResult> {
  const directory = await mkdtemp(join(tmpdir(), 'dss-bench-continuous-'));
  const dynamo = await startDynamoDbLocal({ dataDirectory: join(directory, 'dynamodb'), port: await freePort() });
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials });
  const streams = new DynamoDBStreamsClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials });
  const client = createDocumentClient(dynamo.endpoint);
  // The handler reads its configuration from process.env, as on Lambda; the runner's later steps get it back as it was.
  const environment = { ...process.env };
  try {
    const arns = await ensureTables(admin, LOCAL_TABLES);
    const unused = 'http://127.0.0.1:9';
    Object.assign(
      process.env,
      localEnvironment({
        dataDirectory: directory,
        addresses: { main: unused, upload: unused, auth: unused },
        dynamoDbEndpoint: dynamo.endpoint,
        s3Endpoint: unused,
        cursorSigningKey: 'b'.repeat(64),
        inherited: process.env,
      }),
      { POWERTOOLS_LOG_LEVEL: 'ERROR', POWERTOOLS_METRICS_DISABLED: 'true' },
    );
    // The runtime's modules made the process-wide logger before this environment was set: quiet it here.
    logger.setLogLevel('ERROR');
    const { handler } = (await import('../../functions/handlers/continuous-rollouts.js')) as {
      handler: (event: DynamoDBStreamEvent, context: unknown) => Promise<DynamoDBBatchResponse>;
    };
    const devices = new DynamoDbDeviceRepository(client, LOCAL_TABLES);
    const rollouts = new DynamoDbRolloutRepository(client, LOCAL_TABLES, new CursorCodec(() => Buffer.alloc(32, 7)));
    const scenarios = new DynamoDbScenarioRepository(client, LOCAL_TABLES);
    // The version the rollouts deploy, as an upload records it (only its existence is read).
    await client.send(
      new PutCommand({
        TableName: LOCAL_TABLES.scenarios,
        Item: { company: 'bench', sk: `VERSION#${SCENARIO.id}#${SCENARIO.subId}`, scenarioId: SCENARIO.id, version: SCENARIO.subId },
      }),
    );
    const principal = { subject: 'bench', companies: ['bench'], scopes: new Set(['deployments:write']) };
    const ids: string[] = [];
    for (let index = 0; index < ROLLOUTS; index += 1) {
      const code = `bench-v${index}`;
      const created = await createRollout(
        { rollouts, queue: { send: async () => {} }, scenarios },
        principal,
        'bench',
        { action: 'DEPLOY', what: SCENARIO, targets: { query: `health.versionCode=${code}` }, continuous: true },
        [],
        new Map([['health.versionCode', [code]]]),
      );
      ids.push(created.id);
    }

    const phase = async (company: string, versionOf: (index: number) => string): Promise<Omit<ContinuousPhase, 'joined'>> => {
      let handlerMs = 0;
      let seen = 0;
      const poller = new DynamoDbStreamPoller(streams, arns['continuous-rollouts'], async (event) => {
        const started = performance.now();
        const answer = await handler(event, {});
        handlerMs += performance.now() - started;
        if (answer.batchItemFailures.length > 0) throw new Error(`The handler failed ${answer.batchItemFailures.length} records.`);
        seen += event.Records.filter((record) => record.dynamodb?.NewImage?.company?.S === company).length;
      });
      await poller.positionAtLatest();
      const all = Array.from({ length: CHANGES }, (_, index) => device(company, index, versionOf(index)));
      for (let start = 0; start < all.length; start += 1_000) await devices.put(all.slice(start, start + 1_000));
      while (seen < CHANGES) await poller.pollOnce();
      await poller.stop();
      return { changes: CHANGES, handlerMs, perChangeMs: handlerMs / CHANGES };
    };

    const baseline = { ...(await phase('quiet', (index) => `bench-v${index % ROLLOUTS}`)), joined: 0 };
    const measuredPhase = await phase('bench', (index) =>
      index % JOIN_EVERY === 0 ? `bench-v${(index / JOIN_EVERY) % ROLLOUTS}` : `other-${index}`,
    );
    let joined = 0;
    for (const id of ids) {
      const tallies = await rollouts.tallies('bench', id);
      joined += [...tallies.values()].reduce((sum, tally) => sum + (tally.joined ?? 0), 0);
    }
    if (joined !== Math.ceil(CHANGES / JOIN_EVERY))
      throw new Error(`${joined} devices joined; ${Math.ceil(CHANGES / JOIN_EVERY)} expected.`);
    const measured = { ...measuredPhase, joined };
    return {
      rollouts: ROLLOUTS,
      baseline,
      measured,
      addedPerChangePerRolloutMs: Math.max(0, measured.handlerMs - baseline.handlerMs) / CHANGES / ROLLOUTS,
      upperBoundPerChangePerRolloutMs: measured.handlerMs / CHANGES / ROLLOUTS,
      goalMs: CONTINUOUS_GOAL_MS,
    };
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in environment)) delete process.env[name];
    Object.assign(process.env, environment);
    client.destroy();
    streams.destroy();
    admin.destroy();
    await dynamo.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

/** Prints the figures and whether the goal is met. */
export function reportContinuousBench(result: ContinuousBenchResult, log: (line: string) => void): void {
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  log(`  ${result.rollouts} continuous rollouts; ${result.measured.changes.toLocaleString('en-US')} changed devices per phase`);
  log(`  baseline (no continuous rollout in the company): ${ms(result.baseline.perChangeMs)} per change`);
  log(
    `  with ${result.rollouts} rollouts: ${ms(result.measured.perChangeMs)} per change, ${result.measured.joined.toLocaleString('en-US')} devices joined`,
  );
  const verdict = result.upperBoundPerChangePerRolloutMs <= result.goalMs ? 'meets' : 'misses';
  log(
    `  added per change per continuous rollout: ${ms(result.addedPerChangePerRolloutMs)} (upper bound ${ms(result.upperBoundPerChangePerRolloutMs)}): ${verdict} the goal of ≤ ${result.goalMs} ms`,
  );
}
