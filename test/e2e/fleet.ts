/**
 * Extra devices for tests and benchmarks that need more than the demo's 120 per company: generated like the demo's,
 * written straight into the runtime's DynamoDB Local (start the runtime with a known DYNAMODB_PORT), as
 * DynamoDbDeviceRepository.put writes them. The stream poller then indexes them.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deviceItem } from '../../functions/adapters/aws/device-items.js';
import { batchPutAll } from '../../functions/adapters/aws/dynamodb-batch.js';
import type { Device } from '../../functions/core/devices/model.js';
import { generateDemoDevices } from '../../functions/local/demo-fleet.js';

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
 * Writes the devices as DynamoDbDeviceRepository.put does (batchPutAll: BatchWriteItem, 25 per call, unprocessed
 * items retried), `parallelism` calls at once.
 * @throws Error naming how many devices stayed unwritten.
 */
export async function seedDevices(client: DynamoDBDocumentClient, devices: Device[], parallelism = 16): Promise<void> {
  await batchPutAll(
    client,
    'devices',
    devices.map((device) => deviceItem(device)),
    parallelism,
  );
}
