/**
 * A large local fleet (`npm run seed -- --devices N`): the demo company's kiosks generated as the demo's are
 * (generateDemoDevices with DEMO_SEED: its first 120 are the demo devices), each with a device credential for one
 * shared secret, written straight into the devices table with BatchWriteItem.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import { deviceItem } from '../adapters/aws/device-items.js';
import { batchPutAll } from '../adapters/aws/dynamodb-batch.js';
import type { DeviceCredential } from '../core/devices/model.js';
import { ULID_ALPHABET } from '../core/shared/identifiers.js';
import { DEMO_EPOCH, DEMO_SEED, type DemoFleetOwner } from './demo-data.js';
import { generateDemoDevices } from './demo-fleet.js';

/** Crockford's base32 alphabet, as ULIDs use it. */

/**
 * The credential id of a seeded device: a ULID whose time is DEMO_EPOCH and whose random part is the first 80 bits
 * of sha256(`{company}~{deviceId}`), so a benchmark can sign device tokens (`cred` claim) without reading the table.
 */
export function seededCredentialId(company: string, deviceId: string): string {
  const digest = createHash('sha256').update(`${company}~${deviceId}`).digest();
  let random = '';
  // 16 characters of 5 bits: the first 80 bits of the digest.
  for (let index = 0; index < 16; index += 1) {
    const bit = index * 5;
    const byte = bit >> 3;
    const word = ((digest[byte] as number) << 8) | (digest[byte + 1] as number);
    random += ULID_ALPHABET[(word >> (11 - (bit & 7))) & 31];
  }
  return `${encodeTime(Date.parse(DEMO_EPOCH), 10)}${random}`;
}

/** The file that keeps the seeded fleet's shared secret: `{data}/simulator/seed-credentials.json`, mode 0600. */
export function seedCredentialsFile(dataDirectory: string): string {
  return join(dataDirectory, 'simulator', 'seed-credentials.json');
}

/** What seed-credentials.json holds. */
export interface SeedCredentials {
  company: string;
  /** Devices seeded: `{company}-kiosk-0001` … (generateDemoDevices ids; 4 digits at least). */
  devices: number;
  /** The OAuth client id of a device: `{company}~{deviceId}`. */
  clientIdFormat: string;
  /** The client secret every seeded device shares. */
  secret: string;
  /** Credential ids (the `cred` claim of the device tokens): see seededCredentialId. */
  credentialIds: string;
}

/** The secret of an earlier seed of the data folder, if any (a second seed keeps issued secrets valid). */
export async function earlierSeedSecret(file: string): Promise<string | undefined> {
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as Partial<SeedCredentials>;
    return typeof saved.secret === 'string' && saved.secret.length > 0 ? saved.secret : undefined;
  } catch {
    return undefined;
  }
}

/** Writes seed-credentials.json (mode 0600: it holds a secret every seeded device accepts). */
export async function writeSeedCredentials(file: string, credentials: SeedCredentials): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}

/** Options of seedFleet. */
export interface FleetSeedOptions {
  /** DynamoDB Local's endpoint (the running local runtime's). */
  endpoint: string;
  /** The devices table's name. */
  table: string;
  owner: DemoFleetOwner;
  count: number;
  /** The stored hash of the shared secret (hashDeviceSecret, computed once). */
  secretHash: string;
  /** BatchWriteItem calls in flight. @default 16 */
  concurrency?: number;
  /** The reference instant of the devices' times (ISO-8601). @default the seeding's instant */
  now?: string;
  /** Called after each slice of devices is written, with the number written so far. */
  progress?: (written: number) => void;
}

/** Devices generated and written per slice (bounds the items held at once). */
const SLICE = 10_000;

/**
 * Writes `count` kiosks of `owner` (generateDemoDevices with DEMO_SEED) with their credentials into the devices table,
 * as DynamoDbDeviceRepository writes devices (plus `credential`), overwriting devices of the same ids.
 * @throws Error naming how many items stayed unwritten.
 */
export async function seedFleet(options: FleetSeedOptions): Promise<void> {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: options.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: { httpAgent: { keepAlive: true, maxSockets: options.concurrency ?? 16 } },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  try {
    const devices = generateDemoDevices(options.owner, options.count, DEMO_SEED, options.now ?? new Date().toISOString());
    for (let start = 0; start < devices.length; start += SLICE) {
      const items = devices.slice(start, start + SLICE).map((device) => {
        const credential: DeviceCredential = {
          id: seededCredentialId(device.company, device.id),
          secretHash: options.secretHash,
          created: DEMO_EPOCH,
        };
        return deviceItem({ ...device, credential });
      });
      await batchPutAll(client, options.table, items, options.concurrency ?? 16);
      options.progress?.(Math.min(devices.length, start + SLICE));
    }
  } finally {
    client.destroy();
  }
}
