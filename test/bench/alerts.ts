/**
 * The alert rule benchmark (`npm run bench -- --only-alerts`): what evaluating a company's alert rules adds to each
 * device change the devices table's stream delivers, in process, on the demo fleet's generator.
 *
 * DEVICES changes (ALERT_BENCH_DEVICES, default 100,000 demo devices of acme), each a heartbeat-like change of one
 * device (its health report's time moves on, nothing else), as most changes of a fleet are, are evaluated by
 * evaluateDeviceChanges against 1 rule and against 100 rules (the most a company may have: a mix of the three
 * conditions on queries by location, connection and capability), the rules read from a warm RuleCache and the alert
 * store an in-memory one counting writes. Measured: the time per change (ms) and the writes, then once more with every
 * change flipping a 1-rule DISCONNECTED_FOR condition (each change one write: what a real flip costs beyond memory is
 * DynamoDB's, not the evaluation's). Goal: a rule adds at most 1 ms per device change.
 * JSON to os.tmpdir()/dss-bench/alerts.json.
 */
import { type DeviceImages, evaluateDeviceChanges, RuleCache } from '../../functions/core/alerts/evaluation.js';
import type { AlertCondition, StoredAlertRule } from '../../functions/core/alerts/model.js';
import type { AlertStore } from '../../functions/core/alerts/ports.js';
import type { StoredDevice } from '../../functions/core/devices/model.js';
import { deviceDocumentOf } from '../../functions/core/search/documents.js';
import { DEMO_COMPANIES, DEMO_SEED } from '../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../functions/local/demo-fleet.js';

const DEVICES = Number(process.env.ALERT_BENCH_DEVICES ?? 100_000);

/** One measured pass. */
export interface AlertPass {
  rules: number;
  changes: number;
  /** Wall time of the pass, ms. */
  totalMs: number;
  /** totalMs / changes. */
  perChangeMs: number;
  writes: number;
}

/** What the benchmark measured. */
export interface AlertBenchResult {
  devices: number;
  passes: AlertPass[];
}

/** The rules of the bench: `count` of them, cycling over conditions and queries. */
function benchRules(count: number): StoredAlertRule[] {
  const conditions: AlertCondition[] = [
    { type: 'DISCONNECTED_FOR', minutes: 15 },
    { type: 'SUBDEVICE_STATE_FOR', minutes: 10, states: ['DOWN'] },
    { type: 'BATTERY_BELOW', percent: 5 },
  ];
  const filters: Record<string, string[]>[] = [
    {},
    { 'connection.state': ['CONNECTED'] },
    { 'health.hubs.devices.capability.type': ['PRINTER'] },
    { 'location.name': ['Lyon', 'Paris'] },
  ];
  return Array.from({ length: count }, (_, index) => ({
    id: `RULE${String(index).padStart(22, '0')}`,
    company: 'acme',
    name: `rule ${index}`,
    query: '',
    condition: conditions[index % conditions.length] as AlertCondition,
    filters: filters[index % filters.length] as Record<string, string[]>,
    created: '2026-12-01T00:00:00.000Z',
    updated: '2026-12-01T00:00:00.000Z',
    by: 'bench',
    revision: `REV${String(index).padStart(23, '0')}`,
  }));
}

/** An alert store that writes nothing anywhere, counting the writes asked of it. */
function countingStore(): { store: Pick<AlertStore, 'watch' | 'startWatch' | 'raise' | 'resolve'>; writes: () => number } {
  let writes = 0;
  const store: Pick<AlertStore, 'watch' | 'startWatch' | 'raise' | 'resolve'> = {
    watch: async () => undefined,
    startWatch: async () => {
      writes += 1;
      return 'written';
    },
    raise: async () => {
      writes += 1;
      return 'written';
    },
    resolve: async () => {
      writes += 1;
      return 'written';
    },
  };
  return { store, writes: () => writes };
}

/** Evaluates `changes` against `rules`, timed. */
async function pass(rules: StoredAlertRule[], changes: DeviceImages[]): Promise<AlertPass> {
  const cache = new RuleCache(async () => rules, 60_000);
  await cache.rulesOf('acme');
  const { store, writes } = countingStore();
  const now = () => new Date('2026-12-06T12:00:00.000Z');
  const started = performance.now();
  // One stream batch at a time, as the consumer gets them (LOCAL_STREAM_BATCH_RECORDS).
  for (let start = 0; start < changes.length; start += 500) {
    await evaluateDeviceChanges({ rulesOf: (company) => cache.rulesOf(company), alerts: store, now }, changes.slice(start, start + 500));
  }
  const totalMs = performance.now() - started;
  return { rules: rules.length, changes: changes.length, totalMs, perChangeMs: totalMs / changes.length, writes: writes() };
}

/** Runs the benchmark in process. */
export async function runAlertBench(): Promise<AlertBenchResult> {
  const owner = DEMO_COMPANIES.find((company) => company.id === 'acme');
  if (owner === undefined) throw new Error('The demo data has no acme.');
  const devices = generateDemoDevices(owner, DEVICES, DEMO_SEED) as StoredDevice[];
  const heartbeats: DeviceImages[] = devices.map((device) => {
    const before = deviceDocumentOf(device);
    const after = deviceDocumentOf({ ...device, updated: '2026-12-06T12:00:00.000Z' });
    return { company: 'acme', deviceId: device.id, before, after };
  });
  const flips: DeviceImages[] = devices.map((device) => ({
    company: 'acme',
    deviceId: device.id,
    before: deviceDocumentOf({ ...device, connection: { state: 'CONNECTED', connectedSince: '2026-12-06T11:00:00.000Z' } }),
    after: deviceDocumentOf({ ...device, connection: { state: 'DISCONNECTED', disconnectedSince: '2026-12-06T11:59:00.000Z' } }),
  }));
  const passes = [
    await pass([], heartbeats),
    await pass(benchRules(1), heartbeats),
    await pass(benchRules(100), heartbeats),
    await pass(benchRules(1), flips),
  ];
  return { devices: DEVICES, passes };
}

/** Prints the result as a short table. */
export function reportAlertBench(result: AlertBenchResult, log: (line: string) => void): void {
  log(`  device changes per pass                ${result.devices}`);
  log('  rules   changes   total ms   ms per change   writes');
  for (const entry of result.passes) {
    log(
      `  ${String(entry.rules).padStart(5)}   ${String(entry.changes).padStart(7)}   ${entry.totalMs.toFixed(0).padStart(8)}   ${entry.perChangeMs.toFixed(4).padStart(13)}   ${String(entry.writes).padStart(6)}`,
    );
  }
  const [none, one, hundred] = result.passes;
  if (none !== undefined && one !== undefined && hundred !== undefined) {
    log(`  added by 1 rule per change             ${(one.perChangeMs - none.perChangeMs).toFixed(4)} ms (goal ≤ 1 ms)`);
    log(`  added by 100 rules per change          ${(hundred.perChangeMs - none.perChangeMs).toFixed(4)} ms`);
  }
}
