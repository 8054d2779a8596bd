/**
 * Every function of the service that no HTTP route runs (functions/contract/function.ts): stream consumers, the
 * archive validation, the sweepers, the rollout worker, the search index setup and reindex, and the Cognito trigger.
 * The CDK stacks build them from FUNCTIONS, and the local runtime starts them from it by trigger kind
 * (functions/local/event-functions.ts): a definition here and its handler are all a new function needs.
 */

import { STORED_ARCHIVES, UPLOAD_PREFIX, UPLOADED_ARCHIVES } from './archives.js';
import { defineFunction, type FunctionDefinition } from './function.js';
import { webhookDeliveries, webhookFanout, webhookRetrySweeper } from './webhook-functions.js';

export { webhookDeliveries, webhookFanout, webhookRetrySweeper };

/**
 * The search indexer: the streams of the searchable tables, in order per item, retried from the failed record.
 * Stream reads are granted by the event sources; writes go to the index only.
 */
export const searchIndexer = defineFunction({
  id: 'SearchIndexer',
  label: 'Search indexer',
  entry: 'functions/handlers/search-indexer.ts',
  trigger: { kind: 'tableStream', tables: ['devices', 'scenarios'], batchSize: 100, retryAttempts: 10 },
  access: { storage: false, timeoutSeconds: 60, search: 'index' },
});

/**
 * Deployment changes: the deployments table's stream gives every DEPLOY and UNDEPLOY its history entry and
 * DeploymentChanged event. The consumer is idempotent, so a failed batch is retried (halved each time) until its
 * records are nearly a day old, the stream's retention: a backend outage delays history and events, it does not lose
 * them. It writes history entries, purges undeployed slots, publishes the events and refreshes the desired state tag of
 * each device whose deployments changed (reads the device and queries its active slots, then one conditional
 * UpdateItem of the device). Device reports of a rollout's deployments are counted in the rollouts table: one
 * TransactWriteItems of a Put (conditioned on attribute_not_exists) and an Update (ADD); IAM checks each action of a
 * transaction as its own operation (PutItem, UpdateItem; ConditionCheckItem only for a ConditionCheck action, which
 * it has none of), so the write grant covers it without any read.
 */
export const deploymentChanges = defineFunction({
  id: 'DeploymentChanges',
  label: 'Deployment changes',
  entry: 'functions/handlers/deployment-changes.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['deployments'],
    batchSize: 500,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
  },
  access: {
    storage: true,
    tables: { deployments: 'RW', devices: 'Item', rollouts: 'W', commands: 'R' },
    events: true,
    timeoutSeconds: 60,
  },
});

/**
 * Device changes: the devices table's stream (its second reader, beside the search indexer; DynamoDB Streams allows
 * two). Each change is evaluated in memory against its company's alert rules (one Query of the alerts table per company
 * per batch, cached a few seconds) and only a rule whose holding flips writes (a watch started, an alert raised, or a
 * watch ended and its alert resolved: one TransactWriteItems each, a GetItem of the watch before an end); a change of
 * connection state publishes its DeviceConnectionChanged event. Then each changed device is matched in memory against
 * its company's running continuous rollouts (one Query of the rollouts table's `continuous` index per company per
 * batch); a device that matches and is neither a target nor a member joins (one TransactWriteItems: ConditionCheck,
 * Put, Update), gets its deployment (what the rollout worker writes: reads the device and the scenario version, writes
 * the deployment slot) and its result is counted (one more transaction). Every step is idempotent, so a failed batch
 * is retried from the failed record until its records are nearly a day old. Its id and entry keep the name of its
 * first task, continuous rollouts.
 */
export const continuousRollouts = defineFunction({
  id: 'ContinuousRollouts',
  label: 'Device changes',
  entry: 'functions/handlers/continuous-rollouts.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['devices'],
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
  },
  // A device joining a COMMAND rollout gets its commands (conditional PutItems), cancelled at once (UpdateItem) if the
  // rollout was cancelled meanwhile.
  access: {
    storage: true,
    tables: { devices: 'R', scenarios: 'R', deployments: 'RW', rollouts: 'RW', commands: 'W', alerts: 'RW' },
    events: true,
    timeoutSeconds: 60,
  },
});

/**
 * Administrative changes: the audit table's stream (NEW_IMAGE) gives every audit entry its AdministrativeChange
 * event, the entry's id its id. Publishing only (no table access beyond the stream, which the event source grants);
 * a failed batch is retried (halved each time) until its records are nearly a day old, so a bus outage delays events
 * without losing them.
 */
export const administrativeChanges = defineFunction({
  id: 'AdministrativeChanges',
  label: 'Administrative changes',
  entry: 'functions/handlers/administrative-changes.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['audit'],
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
  },
  access: { storage: false, events: true, timeoutSeconds: 30, memorySize: 256 },
});

/**
 * Presigned uploads: S3 ObjectCreated under the upload prefix. Reads the upload, stores it like a direct upload
 * (server-side copy to companies/, deleted again only when its version record is refused), deletes the upload; 2
 * minutes for archives above the upload API's 10 MB limit.
 */
export const archiveUploaded = defineFunction({
  id: 'ArchiveUploaded',
  label: 'Archive validation',
  entry: 'functions/handlers/scenario-archive-uploaded.ts',
  trigger: { kind: 'objectCreated', prefix: UPLOAD_PREFIX, retryAttempts: 2, maxEventAgeHours: 6 },
  access: {
    storage: true,
    tables: { companies: 'RW', scenarios: 'RW' },
    timeoutSeconds: 120,
    bucket: { [UPLOADED_ARCHIVES]: ['get', 'delete'], [STORED_ARCHIVES]: ['put', 'delete'] },
  },
});

/**
 * Unfinished uploads: queries the scenarios table's `sweep` index, rejects slots and drops staging records
 * (conditional writes); heads and deletes objects (expired or interrupted uploads under uploads/, orphaned archives
 * under companies/), and never writes one. Run by a timer locally (UPLOAD_SWEEP_INTERVAL_MS).
 */
export const uploadSweeper = defineFunction({
  id: 'UploadSweeper',
  label: 'Upload sweeper',
  entry: 'functions/handlers/upload-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 5,
    via: 'rule',
    description: 'Rejects presigned uploads that never finished and deletes orphaned archives.',
  },
  access: {
    storage: true,
    tables: { scenarios: 'RW' },
    timeoutSeconds: 300,
    memorySize: 256,
    bucket: { [UPLOADED_ARCHIVES]: ['get', 'delete'], [STORED_ARCHIVES]: ['get', 'delete'] },
  },
});

/**
 * The heartbeat sweeper: queries the presence table's `sweep` index for connected devices past their deadline, marks
 * each DISCONNECTED (conditional writes on the device) and clears its deadline. Under a minute, so that runs do not
 * overlap. Run by a timer locally (HEARTBEAT_SWEEP_INTERVAL_MS).
 */
export const heartbeatSweeper = defineFunction({
  id: 'HeartbeatSweeper',
  label: 'Heartbeat sweeper',
  entry: 'functions/handlers/heartbeat-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 1,
    via: 'scheduler',
    description: 'Marks devices silent beyond their heartbeat window DISCONNECTED.',
  },
  access: { storage: true, tables: { presence: 'RW', devices: 'RW' }, timeoutSeconds: 50, memorySize: 512, deviceSettings: true },
});

/**
 * The rollout worker: consumes the rollout queue (the local runtime's in-process queue locally), each message one
 * chunk of a wave's targets (functions/core/rollouts/model.ts, RolloutWorkMessage) deployed or undeployed through the
 * ordinary deployment use case (devices and scenario versions read, conditional writes of slots), then marked done in
 * the rollouts table. One chunk per invocation, at most `maxConcurrency` at once whatever the queue's depth, so that a
 * large rollout never takes more of the account's concurrency than that from interactive requests. It sends nothing:
 * lost or failed chunks are the sweeper's to send again. Its timeout: one chunk (at most 500 devices, deployed 16
 * conditional writes at a time) is seconds of work; the rest is headroom for throttled writes retried with backoff.
 */
export const rolloutWorker = defineFunction({
  id: 'RolloutWorker',
  label: 'Rollout worker',
  entry: 'functions/handlers/rollout-worker.ts',
  trigger: {
    kind: 'queue',
    queue: 'RolloutWork',
    queueLabel: 'Rollout queue',
    batchSize: 1,
    maxConcurrency: 4,
    maxReceiveCount: 5,
    // Longer than any wave waits for its chunks: the sweeper sends a chunk again after its chunk timeout anyway.
    retentionDays: 4,
  },
  // A COMMAND rollout's chunk reads its targets' health (devices) and puts its commands, conditionally; a cancel's
  // work moves them to CANCELLED (commands: conditional PutItem and UpdateItem only).
  access: {
    storage: true,
    tables: { devices: 'R', scenarios: 'R', deployments: 'RW', rollouts: 'RW', commands: 'W' },
    timeoutSeconds: 120,
  },
});

/**
 * Deliveries of a rollout message after which a chunk whose deployments met backend errors is accepted with its NONE
 * results (marked done) rather than retried again: two below the queue's redrive count (rolloutWorker's
 * `maxReceiveCount`), so that it never lands in the dead-letter queue for that reason alone.
 */
export const ROLLOUT_LAST_ATTEMPT_RECEIVE_COUNT = rolloutWorker.trigger.maxReceiveCount - 2;

/**
 * The rollout sweeper: queries the rollouts table's `sweep` index for running rollouts and scheduled ones whose start
 * has come, starts the latter, starts, completes or pauses waves (conditional writes on the rollout's version) and
 * sends their chunks to the rollout queue, again when lost. Under a minute, so that runs do not overlap. Run by a
 * timer locally (ROLLOUT_SWEEP_INTERVAL_MS).
 */
export const rolloutSweeper = defineFunction({
  id: 'RolloutSweeper',
  label: 'Rollout sweeper',
  entry: 'functions/handlers/rollout-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 1,
    via: 'scheduler',
    description: 'Starts, completes and pauses the waves of running rollouts; sends their chunks again when lost.',
  },
  access: { storage: true, tables: { rollouts: 'RW' }, rolloutQueue: true, timeoutSeconds: 50, memorySize: 512 },
});

/**
 * AWS only: installs the index template and alias on deploy (the custom resource changes with the template),
 * retrying for up to 10 minutes while a new domain refuses (SETUP_RETRY_BUDGET_MS); the last attempt fits in the
 * remaining 2 minutes of its 12 (the provider framework waits 15).
 */
export const searchIndexSetup = defineFunction({
  id: 'SearchIndexSetup',
  label: 'Search index setup',
  entry: 'functions/handlers/search-index-setup.ts',
  trigger: { kind: 'customResource', resourceType: 'Custom::SearchIndexSetup' },
  access: { storage: false, timeoutSeconds: 720, memorySize: 256, search: 'admin' },
});

/** AWS only: scans the two searchable tables into a new index, invoked by hand (`npm run reindex` locally). */
export const searchReindex = defineFunction({
  id: 'SearchReindex',
  label: 'Search reindex',
  entry: 'functions/handlers/search-reindex.ts',
  trigger: {
    kind: 'manual',
    output: { name: 'SearchReindexFunctionName', description: 'Invoke to rebuild the search index from DynamoDB.' },
  },
  access: { storage: false, tables: { devices: 'R', scenarios: 'R' }, timeoutSeconds: 900, search: 'admin' },
});

/**
 * AWS only: the user pool's pre-token-generation trigger, adding the user's scopes and companies to access tokens.
 * Cognito waits at most 5 s for a trigger.
 */
export const preTokenGeneration = defineFunction({
  id: 'PreTokenGeneration',
  label: 'Cognito pre-token-generation trigger',
  entry: 'functions/handlers/cognito-pre-token-generation.ts',
  trigger: { kind: 'cognito', operation: 'preTokenGeneration' },
  access: { storage: false, timeoutSeconds: 5, memorySize: 256 },
});

/**
 * Command changes: the commands table's stream gives every change of a command's state its CommandStateChanged event,
 * refreshes the desired state tag of each device whose pending commands changed (reads the device and queries its
 * active slots and pending commands, then one conditional UpdateItem of the device), and counts each final command of
 * a rollout for its wave (one TransactWriteItems of a Put and an Update, as device reports of deployments). Idempotent;
 * a failed batch is retried until its records are nearly a day old.
 */
export const commandChanges = defineFunction({
  id: 'CommandChanges',
  label: 'Command changes',
  entry: 'functions/handlers/command-changes.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['commands'],
    batchSize: 500,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
  },
  access: { storage: true, tables: { commands: 'R', deployments: 'R', devices: 'Item', rollouts: 'W' }, events: true, timeoutSeconds: 60 },
});

/**
 * The command expiry sweeper: queries the commands table's sparse `sweep` index for pending commands past their
 * `expiresAt` and makes each EXPIRED (one conditional UpdateItem each). Under a minute, so that runs do not overlap.
 * Run by a timer locally (COMMAND_SWEEP_INTERVAL_MS).
 */
export const commandExpirySweeper = defineFunction({
  id: 'CommandExpirySweeper',
  label: 'Command expiry sweeper',
  entry: 'functions/handlers/command-expiry-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 1,
    via: 'scheduler',
    description: 'Makes commands not final at their expiry EXPIRED.',
  },
  access: { storage: true, tables: { commands: 'RW' }, timeoutSeconds: 50, memorySize: 256 },
});

/**
 * Rollout changes: the rollouts table's stream gives a rollout that paused or completed its RolloutStateChanged event
 * (webhooks' rollout.paused and rollout.completed). Only the rollout items' records reach it (`ROLLOUT#` partitions):
 * the tallies and reports, written once per device, invoke nothing. It reads no table. Idempotent; a failed batch is
 * retried until its records are nearly a day old.
 */
export const rolloutChanges = defineFunction({
  id: 'RolloutChanges',
  label: 'Rollout changes',
  entry: 'functions/handlers/rollout-changes.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['rollouts'],
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
    partitionKeyPrefix: 'ROLLOUT#',
  },
  access: { storage: false, events: true, timeoutSeconds: 30, memorySize: 256 },
});

/**
 * Alert changes: the alerts table's stream gives every alert that became OPEN or RESOLVED its AlertChanged event
 * (webhooks' alert.raised and alert.resolved), and ends the watches of a rule deleted or whose query or condition
 * changed (a Query of the rule's watches, then one TransactWriteItems per watch: its Delete and its alert's Update),
 * and evaluates a rule created or changed on the devices already holding its condition (the search's ids, at most
 * 10,000, then BatchGetItem of the devices; a watch or alert started per holder). Idempotent; a failed batch is
 * retried until its records are nearly a day old.
 */
export const alertChanges = defineFunction({
  id: 'AlertChanges',
  label: 'Alert changes',
  entry: 'functions/handlers/alert-changes.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['alerts'],
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
  },
  access: { storage: true, tables: { alerts: 'RW', devices: 'R' }, search: 'search', events: true, timeoutSeconds: 60, memorySize: 256 },
});

/**
 * The alert sweeper: queries the alerts table's sparse `due` index for watches whose rule's minutes have passed,
 * reads the rule and the device again, and raises the alert (one TransactWriteItems: ConditionCheck of the rule, the
 * watch's Update, the alert's Put) or ends the watch of a device that recovered; and for the rules created or changed
 * half a minute ago, asks the search again for the devices holding their condition (the backfill of AlertChanges once
 * more, then an UpdateItem ending the recheck). Under a minute, so that runs do not overlap. Run by a timer locally
 * (ALERT_SWEEP_INTERVAL_MS).
 */
export const alertSweeper = defineFunction({
  id: 'AlertSweeper',
  label: 'Alert sweeper',
  entry: 'functions/handlers/alert-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 1,
    via: 'scheduler',
    description: "Raises the alerts whose condition has held for their rule's minutes.",
  },
  access: { storage: true, tables: { alerts: 'RW', devices: 'R' }, search: 'search', timeoutSeconds: 50, memorySize: 256 },
});

/**
 * AWS only: the bearer authorizer of the main and upload APIs' user routes (API Gateway's JWT authorizer trusts one
 * issuer, and these routes take two: the user pool's access tokens and the API clients' tokens of the device issuer).
 * It verifies the token (signature, issuer, audience, expiry: the pool's keys fetched and kept 10 minutes, the device
 * issuer's public key read from KMS once per cold start) and hands the route's function its claims; the function checks the scope
 * and company. Its answer is cached 300 s per token, so a caller's second request within five minutes invokes no
 * authorizer; the route's function refuses a token that has expired meanwhile. Locally the gateway runs the same
 * verification (verifyBearerToken) before each handler.
 */
export const bearerAuthorizer = defineFunction({
  id: 'BearerAuthorizer',
  label: 'Bearer token authorizer',
  entry: 'functions/handlers/bearer-authorizer.ts',
  trigger: { kind: 'httpAuthorizer', apis: ['main', 'upload'], resultsCacheTtlSeconds: 300 },
  access: { storage: false, deviceKey: 'publicKey', userTokens: true, timeoutSeconds: 10, memorySize: 256 },
});

/** Every function no route runs, in the order the stateless stack creates them. */
export const FUNCTIONS: readonly FunctionDefinition[] = [
  searchIndexer,
  deploymentChanges,
  continuousRollouts,
  administrativeChanges,
  archiveUploaded,
  uploadSweeper,
  heartbeatSweeper,
  rolloutWorker,
  rolloutSweeper,
  commandChanges,
  commandExpirySweeper,
  rolloutChanges,
  webhookFanout,
  webhookDeliveries,
  webhookRetrySweeper,
  alertChanges,
  alertSweeper,
  searchIndexSetup,
  searchReindex,
  preTokenGeneration,
  bearerAuthorizer,
];

// Shorthands of the definitions above, for the code that names one of these functions by its handler module or
// figures (the stacks' tests, the benchmarks): each read from its definition, so that none can disagree with it. The
// local runtime needs none of them: it starts every function of FUNCTIONS by its trigger (functions/local/).

/** The search indexer, fed by DynamoDB Streams of the searchable tables. */
export const SEARCH_INDEXER_ENTRY = searchIndexer.entry;

/** The deployments table's stream feeds this consumer: history entries and DeploymentChanged events of every change. */
export const DEPLOYMENT_CHANGES_ENTRY = deploymentChanges.entry;

/** The devices table's stream feeds this consumer too: devices that start matching a continuous rollout join it. */
export const CONTINUOUS_ROLLOUTS_ENTRY = continuousRollouts.entry;

/** The audit table's stream feeds this consumer: an AdministrativeChange event for every audit entry. */
export const ADMINISTRATIVE_CHANGES_ENTRY = administrativeChanges.entry;

/** AWS only: the function, invoked by hand, that rebuilds the OpenSearch index from DynamoDB (`npm run reindex` locally). */
export const SEARCH_REINDEX_ENTRY = searchReindex.entry;

/** AWS only: the CloudFormation custom resource (CDK Provider `onEvent`) installing the index template and alias. */
export const SEARCH_INDEX_SETUP_ENTRY = searchIndexSetup.entry;

/** S3 ObjectCreated notifications of the archive bucket, by key prefix: presigned uploads are validated here. */
export const ARCHIVE_UPLOADED = { prefix: archiveUploaded.trigger.prefix, entry: archiveUploaded.entry } as const;

/** The upload sweeper: run every `everyMinutes` by a schedule on AWS, by a timer locally (UPLOAD_SWEEP_INTERVAL_MS). */
export const UPLOAD_SWEEPER = { entry: uploadSweeper.entry, everyMinutes: uploadSweeper.trigger.everyMinutes } as const;

/**
 * The heartbeat sweeper: marks devices silent beyond DEVICE_HEARTBEAT_SECONDS DISCONNECTED. Run every
 * `everyMinutes` by EventBridge Scheduler on AWS, by a timer locally (HEARTBEAT_SWEEP_INTERVAL_MS).
 */
export const HEARTBEAT_SWEEPER = { entry: heartbeatSweeper.entry, everyMinutes: heartbeatSweeper.trigger.everyMinutes } as const;

/**
 * The rollout worker: consumes the rollout queue (SQS on AWS, `batchSize` messages per invocation, at most
 * `maxConcurrency` invocations at once; the local runtime's in-process queue locally), each message one chunk of a
 * wave's targets to deploy (functions/core/rollouts/model.ts, RolloutWorkMessage); a message failed `maxReceiveCount` times
 * is given up (the dead-letter queue on AWS).
 */
export const ROLLOUT_WORKER = {
  entry: rolloutWorker.entry,
  batchSize: rolloutWorker.trigger.batchSize,
  maxConcurrency: rolloutWorker.trigger.maxConcurrency,
  maxReceiveCount: rolloutWorker.trigger.maxReceiveCount,
} as const;

/**
 * The rollout sweeper: completes waves (all reports in, or timed out), pauses on failures, starts the next wave and
 * re-sends chunks whose message was lost. Run every `everyMinutes` by EventBridge Scheduler on AWS, by a timer locally
 * (ROLLOUT_SWEEP_INTERVAL_MS).
 */
export const ROLLOUT_SWEEPER = { entry: rolloutSweeper.entry, everyMinutes: rolloutSweeper.trigger.everyMinutes } as const;
