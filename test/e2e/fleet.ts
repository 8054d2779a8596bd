/**
 * Extra devices for tests and benchmarks that need more than the demo's 120 per company: generated like the demo's,
 * written straight into the runtime's DynamoDB Local (start the runtime with a known DYNAMODB_PORT), as
 * DynamoDbDeviceRepository.put writes them. The stream poller then indexes them.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { Device } from '../../functions/core/devices.js';
import { generateDemoDevices } from '../../functions/local/demo-data.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Device i (1-based) of a generated fleet: `{company}-{label}-00001`. */
export const fleetDeviceId = (company: string, label: string, index: number) => `${company}-${label}-${String(index).padStart(5, '0')}`;

/**
 * `count` realistic devices of `company` (generateDemoDevices with another seed than the demo), ids rewritten to
 * fleetDeviceId everywhere they occur (hub and peripheral uids embed them) and serials to `<prefix>-K<rev>-9NNNNN`.
 */
export function fleetDevices(company: string, prefix: string, label: string, count: number): Device[] {
  return generateDemoDevices({ id: company, prefix }, count, 4_242).map((device, index) => {
    const id = fleetDeviceId(company, label, index + 1);
    const rewritten = JSON.parse(JSON.stringify(device).replaceAll(device.id, id)) as Device;
    rewritten.serial = device.serial.replace(/-\d{6}$/, `-9${String(index + 1).padStart(5, '0')}`);
    return rewritten;
  });
}

/** A document client on a local DynamoDB endpoint with `maxSockets` keep-alive connections. */
export function localDocumentClient(endpoint: string, maxSockets = 64): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { httpAgent: { keepAlive: true, maxSockets } },
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
}

/**
 * Writes the devices as DynamoDbDeviceRepository.put does: BatchWriteItem, 25 per call, `parallelism` calls at once.
 * @throws Error when some stay unprocessed after 8 attempts.
 */
export async function seedDevices(client: DynamoDBDocumentClient, devices: Device[], parallelism = 16): Promise<void> {
  const limit = pLimit(parallelism);
  const chunks: Device[][] = [];
  for (let start = 0; start < devices.length; start += 25) chunks.push(devices.slice(start, start + 25));
  await Promise.all(
    chunks.map((chunk) =>
      limit(async () => {
        let pending = chunk.map((device) => ({ PutRequest: { Item: { ...device, deviceId: device.id, entity: 'DEVICE' } as Record<string, unknown> } }));
        for (let attempt = 0; pending.length > 0; attempt += 1) {
          if (attempt === 8) throw new Error(`seeding: ${pending.length} devices left unprocessed`);
          if (attempt > 0) await sleep(25 * 2 ** attempt);
          const response = await client.send(new BatchWriteCommand({ RequestItems: { devices: pending } }));
          pending = (response.UnprocessedItems?.devices as typeof pending | undefined) ?? [];
        }
      }),
    ),
  );
}
