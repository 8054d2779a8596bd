/**
 * The composition root: the only place that chooses adapters. Lambda handlers and the local runtime both call
 * `services()`; the environment (read once per cold start) decides between AWS endpoints and the embedded backends.
 * The search adapters are chosen in search-composition.ts, apart, so that only the search functions bundle the
 * OpenSearch client.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type {
  ArchiveStore,
  ClientFailureStore,
  DeploymentRepository,
  DeviceRepository,
  DeviceTokenSigner,
  PresenceRepository,
  RolloutRepository,
  ScenarioCatalog,
  ScenarioRepository,
  UploadSlotRepository,
  VerificationGate,
  WorkQueue,
} from '../core/ports.js';
import type { ClientFailurePolicy } from '../core/client-failures.js';
import { DynamoDbClientFailureStore } from '../adapters/aws/dynamodb-client-failure-store.js';
import { BoundedVerificationGate } from '../adapters/verification-gate.js';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDbRolloutRepository } from '../adapters/aws/dynamodb-rollout-repository.js';
import { SqsWorkQueue } from '../adapters/aws/sqs-work-queue.js';
import { LocalWorkQueue } from '../adapters/embedded/local-work-queue.js';
import { rolloutConfig } from './config.js';
import { createDocumentClient, createS3Client } from '../adapters/aws/clients.js';
import { DynamoDbCompanyRepository } from '../adapters/aws/dynamodb-company-repository.js';
import { DynamoDbDeploymentRepository } from '../adapters/aws/dynamodb-deployment-repository.js';
import { DynamoDbDeviceRepository } from '../adapters/aws/dynamodb-device-repository.js';
import { DynamoDbPresenceRepository } from '../adapters/aws/dynamodb-presence-repository.js';
import { DynamoDbScenarioRepository } from '../adapters/aws/dynamodb-scenario-repository.js';
import type { TableNames } from '../adapters/aws/dynamodb-shared.js';
import { DynamoDbUploadSlotRepository } from '../adapters/aws/dynamodb-upload-slot-repository.js';
import { DynamoDbDeploymentHistory } from '../adapters/aws/dynamodb-deployment-history.js';
import { DynamoDbScenarioCatalog } from '../adapters/aws/dynamodb-scenario-catalog.js';
import type { DeploymentHistory } from '../core/deployment-history.js';
import { S3ArchiveStore } from '../adapters/aws/s3-archive-store.js';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createDynamoDbClient } from '../adapters/aws/clients.js';
import { CompressedDynamoDbPersistenceLayer } from '../adapters/aws/dynamodb-idempotency-store.js';
import { EventBridgeEventPublisher } from '../adapters/aws/eventbridge-event-publisher.js';
import { LocalEventBus } from '../adapters/embedded/local-event-bus.js';
import type { EventPublisher } from '../core/ports.js';
import { LocalIdentityProvider } from '../adapters/embedded/local-identity-provider.js';
import { CursorCodec } from '../adapters/aws/cursor-codec.js';
import { ENV } from '../contract/environment.js';
import { clientFailuresConfig, cursorSigningKey, eventsConfig, idempotencyConfig, localIssuerConfig, storageConfig } from './config.js';
import { deviceIssuerConfig } from './config.js';
import { KmsDeviceIssuerKeys, KmsDeviceTokenSigner, runtimeKmsClient } from '../adapters/aws/kms-device-token-signer.js';
import { traced } from './observability.js';
import { problemOf } from './problem.js';

/** Every adapter a handler may need, but the search index (search-composition.ts: `searchIndex()`). */
export interface Services {
  dynamoDb: DynamoDBDocumentClient;
  s3: S3Client;
  tables: TableNames;
  companies: DynamoDbCompanyRepository;
  devices: DeviceRepository;
  /** Devices' last reports and heartbeat deadlines (presence table). */
  presence: PresenceRepository;
  scenarios: ScenarioRepository;
  /** Read side of scenarios: listings, versions (single Queries / GetItems). */
  catalog: ScenarioCatalog;
  deployments: DeploymentRepository;
  /** Read side of deployments: the history listings (single Queries on the deployments table and its indexes). */
  history: DeploymentHistory;
  archives: ArchiveStore;
  uploads: UploadSlotRepository;
  /** Signs and verifies every listing's cursors (CURSOR_SIGNING_KEY, read on first use or by `load()`). */
  cursors: CursorCodec;
  /** Rollouts, their target chunks and wave tallies (rollouts table). */
  rollouts: RolloutRepository;
  /**
   * The rollout work queue (ROLLOUT_QUEUE_URL: SQS, or the local runtime's in-process queue for `local:…`), built on
   * first use, so that functions without the `rollouts` variables never read them.
   * @throws EnvironmentError naming ROLLOUT_QUEUE_URL when it is missing or malformed.
   */
  readonly queue: WorkQueue;
  /** Shapes a refusal as its problem+json body (problem.ts): what a REJECTED upload slot keeps. */
  problemOf: typeof problemOf;
}

let built: Services | undefined;

/** Builds (once) and returns the adapters. @throws EnvironmentError naming every missing or malformed storage variable. */
export function services(): Services {
  if (built === undefined) {
    const config = storageConfig();
    // Traced once here (X-Ray subsegment per SDK call); the document client shares its DynamoDB client's middleware.
    const dynamoDb = traced(createDocumentClient(config.dynamoDbEndpoint));
    const s3 = traced(createS3Client(config.s3Endpoint));
    const tables: TableNames = {
      companies: config.companiesTable,
      devices: config.devicesTable,
      scenarios: config.scenariosTable,
      deployments: config.deploymentsTable,
      presence: config.presenceTable,
      rollouts: config.rolloutsTable,
    };
    // One codec signs every listing's cursors; CURSOR_SIGNING_KEY is read on the first cursor, so functions that never
    // page (and are not given the key) never need it.
    const cursors = new CursorCodec(cursorSigningKey);
    const parts: Omit<Services, 'queue'> = {
      dynamoDb,
      s3,
      tables,
      companies: new DynamoDbCompanyRepository(dynamoDb, tables),
      devices: new DynamoDbDeviceRepository(dynamoDb, tables),
      presence: new DynamoDbPresenceRepository(dynamoDb, tables),
      scenarios: new DynamoDbScenarioRepository(dynamoDb, tables),
      catalog: new DynamoDbScenarioCatalog(dynamoDb, tables, cursors),
      deployments: new DynamoDbDeploymentRepository(dynamoDb, tables, cursors),
      history: new DynamoDbDeploymentHistory(dynamoDb, tables, cursors),
      archives: new S3ArchiveStore(s3, config.archiveBucket),
      uploads: new DynamoDbUploadSlotRepository(dynamoDb, tables),
      cursors,
      rollouts: new DynamoDbRolloutRepository(dynamoDb, tables, cursors),
      problemOf,
    };
    // Not enumerable: a caller spreading services() (`{ ...services(), … }`) must not build the queue, which reads
    // the `rollouts` variables only the functions sending rollout work are given.
    built = Object.defineProperty(parts, 'queue', { get: workQueue, enumerable: false }) as Services;
  }
  return built;
}

let queue: WorkQueue | undefined;

/** The rollout work queue of services().queue, built once. @throws EnvironmentError naming a bad `rollouts` variable. */
function workQueue(): WorkQueue {
  if (queue === undefined) {
    const { queueUrl } = rolloutConfig();
    queue = queueUrl.startsWith('local:') ? new LocalWorkQueue(queueUrl) : new SqsWorkQueue(traced(new SQSClient({})), queueUrl);
  }
  return queue;
}

let identity: Promise<LocalIdentityProvider> | undefined;

/**
 * The token issuer. Locally: the LocalIdentityProvider in `LOCAL_AUTH_DIR`, issuing for `JWT_ISSUER`/`JWT_AUDIENCE`
 * tokens valid `TOKEN_LIFETIME_SECONDS`.
 * @throws EnvironmentError naming LOCAL_AUTH_DIR when it is not set (in AWS the token endpoint is backed by Cognito),
 *   or another missing or malformed variable of the local issuer.
 */
export function identityProvider(): Promise<LocalIdentityProvider> {
  if (identity === undefined) {
    const config = localIssuerConfig();
    identity = LocalIdentityProvider.fromDirectory(config.directory, {
      issuer: config.issuer,
      audience: config.audience,
      tokenLifetimeSeconds: config.tokenLifetimeSeconds,
    });
  }
  return identity;
}

/**
 * The signer of device tokens (client credentials grant). On AWS (DEVICE_TOKEN_KEY_ARN set): the KMS key of the device
 * issuer. Locally: the LocalIdentityProvider's key, so that device tokens verify against the same JWKS as user tokens.
 * @throws EnvironmentError as identityProvider() does.
 */
export async function deviceTokenSigner(): Promise<DeviceTokenSigner> {
  // On AWS the key stays in KMS: the token function only holds the key's ARN and may only ask KMS to sign.
  if (process.env[ENV.deviceTokenKeyArn] !== undefined) return (await awsDeviceIssuer()).signer;
  return identityProvider();
}

let publisher: EventPublisher | undefined;

/**
 * The event bus for DeploymentChanged events: EventBridge when `EVENT_BUS_NAME` is set (AWS), the local bus
 * appending to `LOCAL_EVENTS_FILE` otherwise (local runtime).
 * @throws EnvironmentError naming EVENT_BUS_NAME when neither variable is set.
 */
export function eventPublisher(): EventPublisher {
  if (publisher === undefined) {
    const config = eventsConfig();
    publisher =
      'busName' in config
        ? new EventBridgeEventPublisher(traced(new EventBridgeClient({})), config.busName)
        : new LocalEventBus(config.localFile);
  }
  return publisher;
}

let idempotency: CompressedDynamoDbPersistenceLayer | undefined;

/**
 * Powertools idempotency persistence on the `IDEMPOTENCY_TABLE` table (pk `id`, TTL attribute `expiration`),
 * storing responses compressed and, above 256 KiB compressed, in chunk items (so any response fits).
 * @throws EnvironmentError when IDEMPOTENCY_TABLE is not set (or DYNAMODB_ENDPOINT is not a URL).
 */
export function idempotencyStore(): CompressedDynamoDbPersistenceLayer {
  if (idempotency === undefined) {
    const config = idempotencyConfig();
    idempotency = new CompressedDynamoDbPersistenceLayer({
      tableName: config.tableName,
      client: traced(createDynamoDbClient(config.dynamoDbEndpoint)),
    });
  }
  return idempotency;
}

/**
 * What secret checks need besides the credentials (functions/core/client-failures.ts, CheckLimits): the client
 * credentials grant's, and the local issuer's password checks.
 */
export interface ClientAuthentication {
  /** Attempts per key (client id or username, and source), on CLIENT_FAILURES_TABLE. */
  failures: ClientFailureStore;
  /** This process's admission and ordering of secret hashes (one per process: it bounds the process's hashing). */
  gate: VerificationGate;
  /** CLIENT_FAILURE_LIMIT failures in CLIENT_FAILURE_WINDOW_SECONDS. */
  policy: ClientFailurePolicy;
}

let clientAuthenticationParts: ClientAuthentication | undefined;

/**
 * The secret checks' attempt store (DynamoDbClientFailureStore on services()' DynamoDB client), their
 * verification gate (BoundedVerificationGate with DEFAULT_GATE_OPTIONS, the window as how long a failed source stays
 * suspect) and its policy, built once.
 * @throws EnvironmentError naming each missing or malformed variable of the `clientFailures` (or `storage`) group.
 */
export function clientAuthentication(): ClientAuthentication {
  if (clientAuthenticationParts === undefined) {
    const config = clientFailuresConfig();
    clientAuthenticationParts = {
      failures: new DynamoDbClientFailureStore(services().dynamoDb, config.tableName),
      gate: new BoundedVerificationGate({ suspectForMs: config.policy.windowMs }),
      policy: config.policy,
    };
  }
  return clientAuthenticationParts;
}

/** The device token issuer on AWS: a KMS key signs device tokens, and its public half is the issuer's key set. */
export interface AwsDeviceIssuer {
  /** Signs device tokens (KMS Sign; the function needs kms:Sign on the key). */
  signer: DeviceTokenSigner;
  /** The issuer's key set (KMS GetPublicKey, once per cold start; the function needs kms:GetPublicKey). */
  keys: KmsDeviceIssuerKeys;
  /** `iss` of device tokens: `{auth_url}/device`. */
  issuer: string;
}

let awsIssuer: Promise<AwsDeviceIssuer> | undefined;

/**
 * The device issuer on AWS, built once: KmsDeviceTokenSigner and KmsDeviceIssuerKeys on the key DEVICE_TOKEN_KEY_ARN,
 * for DEVICE_TOKEN_ISSUER and DEVICE_TOKEN_AUDIENCE.
 * @throws EnvironmentError naming each missing or malformed variable of the `deviceIssuer` group (unset locally,
 *   where the local issuer signs device tokens).
 */
export function awsDeviceIssuer(): Promise<AwsDeviceIssuer> {
  if (awsIssuer === undefined) {
    const config = deviceIssuerConfig();
    awsIssuer = runtimeKmsClient().then((client) => {
      const kms = traced(client);
      return {
        signer: new KmsDeviceTokenSigner(kms, config),
        keys: new KmsDeviceIssuerKeys(kms, config.keyArn),
        issuer: config.issuer,
      };
    });
    awsIssuer.catch(() => {
      awsIssuer = undefined;
    });
  }
  return awsIssuer;
}
