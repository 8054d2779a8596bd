/**
 * The DynamoDB side of the composition root: the document client, the table names, the cursor codec and every
 * repository over them. Every function that touches a table imports this module; it loads no other AWS SDK client.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../adapters/aws/clients.js';
import { CursorCodec } from '../../adapters/aws/cursor-codec.js';
import { DynamoDbCommandRepository } from '../../adapters/aws/dynamodb-command-repository.js';
import { DynamoDbCompanyRepository } from '../../adapters/aws/dynamodb-company-repository.js';
import { DynamoDbDeploymentHistory } from '../../adapters/aws/dynamodb-deployment-history.js';
import { DynamoDbDeploymentRepository } from '../../adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbDeviceCounter } from '../../adapters/aws/dynamodb-device-counter.js';
import { DynamoDbDeviceRepository } from '../../adapters/aws/dynamodb-device-repository.js';
import { DynamoDbPresenceRepository } from '../../adapters/aws/dynamodb-presence-repository.js';
import { DynamoDbRolloutRepository } from '../../adapters/aws/dynamodb-rollout-repository.js';
import { DynamoDbScenarioCatalog } from '../../adapters/aws/dynamodb-scenario-catalog.js';
import { DynamoDbScenarioRepository } from '../../adapters/aws/dynamodb-scenario-repository.js';
import type { TableNames } from '../../adapters/aws/dynamodb-shared.js';
import { DynamoDbUploadSlotRepository } from '../../adapters/aws/dynamodb-upload-slot-repository.js';
import { CompanyNameCache } from '../../adapters/company-name-cache.js';
import type { DeviceDocumentReader } from '../../core/alerts/backfill.js';
import type { CommandRepository } from '../../core/commands/ports.js';
import type { DeviceCounter } from '../../core/companies/ports.js';
import type { DeploymentHistory } from '../../core/deployments/history.js';
import type { DeploymentRepository } from '../../core/deployments/ports.js';
import type { DeviceRepository, PresenceRepository } from '../../core/devices/ports.js';
import type { RolloutRepository, TargetHealthReader, TargetStatusReader } from '../../core/rollouts/ports.js';
import type { ScenarioCatalog, ScenarioRepository, UploadSlotRepository } from '../../core/scenarios/ports.js';
import type { CompanyRepository } from '../../core/shared/companies.js';
import { cursorSigningKey, storageConfig } from '../config.js';
import { traced } from '../observability.js';

/** The repositories over the service's tables (STORAGE variables), and what they share. */
export interface StorageServices {
  dynamoDb: DynamoDBDocumentClient;
  tables: TableNames;
  companies: DynamoDbCompanyRepository;
  devices: DeviceRepository;
  /** Counts a company's devices (one paginated COUNT Query of its devices partition). */
  deviceCounts: DeviceCounter;
  /** Devices' last reports and heartbeat deadlines (presence table). */
  presence: PresenceRepository;
  scenarios: ScenarioRepository;
  /** Read side of scenarios: listings, versions (single Queries / GetItems). */
  catalog: ScenarioCatalog;
  deployments: DeploymentRepository;
  /** Read side of deployments: the history listings (single Queries on the deployments table and its indexes). */
  history: DeploymentHistory;
  uploads: UploadSlotRepository;
  /** Signs and verifies every listing's cursors (CURSOR_SIGNING_KEY, read on first use or by `load()`). */
  cursors: CursorCodec;
  /** Rollouts, their target chunks and wave tallies (rollouts table). */
  rollouts: RolloutRepository;
  /** Devices' latest reports on their active slots of one version, batched (the deployments repository's). */
  targetStatuses: TargetStatusReader;
  /** Devices' latest health reports, batched (the devices repository's): what a COMMAND rollout's targets advertise. */
  targetHealth: TargetHealthReader;
  /** Commands run on devices' sub-devices (commands table). */
  commands: CommandRepository;
  /** Devices' search documents, batched (the devices repository's): what a new alert rule is evaluated on. */
  deviceDocuments: DeviceDocumentReader;
}

let built: StorageServices | undefined;

/**
 * Builds (once) and returns the repositories over the tables, on one traced document client.
 * @throws EnvironmentError naming every missing or malformed storage variable.
 */
export function storage(): StorageServices {
  if (built === undefined) {
    const config = storageConfig();
    // Traced once here (X-Ray subsegment per SDK call); the document client shares its DynamoDB client's middleware.
    const dynamoDb = traced(createDocumentClient(config.dynamoDbEndpoint));
    const tables: TableNames = {
      companies: config.companiesTable,
      devices: config.devicesTable,
      scenarios: config.scenariosTable,
      deployments: config.deploymentsTable,
      presence: config.presenceTable,
      rollouts: config.rolloutsTable,
      commands: config.commandsTable,
    };
    // One codec signs every listing's cursors; CURSOR_SIGNING_KEY is read on the first cursor, so functions that never
    // page (and are not given the key) never need it.
    const cursors = new CursorCodec(cursorSigningKey);
    const deployments = new DynamoDbDeploymentRepository(dynamoDb, tables, cursors);
    const devices = new DynamoDbDeviceRepository(dynamoDb, tables);
    built = {
      dynamoDb,
      tables,
      companies: new DynamoDbCompanyRepository(dynamoDb, tables, cursors),
      devices,
      deviceCounts: new DynamoDbDeviceCounter(dynamoDb, tables),
      presence: new DynamoDbPresenceRepository(dynamoDb, tables),
      scenarios: new DynamoDbScenarioRepository(dynamoDb, tables),
      catalog: new DynamoDbScenarioCatalog(dynamoDb, tables, cursors),
      deployments,
      history: new DynamoDbDeploymentHistory(dynamoDb, tables, cursors),
      uploads: new DynamoDbUploadSlotRepository(dynamoDb, tables),
      cursors,
      rollouts: new DynamoDbRolloutRepository(dynamoDb, tables, cursors),
      targetStatuses: deployments,
      targetHealth: devices,
      commands: new DynamoDbCommandRepository(dynamoDb, tables, cursors),
      deviceDocuments: devices,
    };
  }
  return built;
}

let names: CompanyRepository | undefined;

/**
 * The companies for their display names only: a CompanyNameCache over storage().companies, built once, so each
 * company is read at most once per COMPANY_NAME_TTL_MS per process (usage figures may be that old: never for quotas).
 * @throws EnvironmentError as storage() does.
 */
export function companyNames(): CompanyRepository {
  names ??= new CompanyNameCache(storage().companies);
  return names;
}
