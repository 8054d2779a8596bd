/**
 * DynamoDB key design, shared by the adapters, the local table creation and the CDK stack.
 *
 * - companies:   pk `companyId`.                      Item: name, quotaBytes, usedBytes. Listed (administration) by a
 *                                                      paginated Scan: keyed by the id alone, and companies are few.
 * - devices:     pk `company`, sk `deviceId`.          Item: the device resource. Stream → search indexer.
 * - scenarios:   pk `company`, sk `sk`:
 *                  `SCENARIO#{scenarioId}`             summary (name, latestVersion, versions); stream → search indexer
 *                                                      (`latestVersion` holds the last upload: lastUploadedVersion)
 *                  `VERSION#{scenarioId}#{version}`    immutable version (size, sha256, archiveKey, uploadedBy, created)
 *                  `UPLOAD#{uploadId}`                 presigned upload slot (status, expiresAt, claimedAt, result/problem)
 *                  `STAGED#{ulid}`                     archive written under its final key, version not yet recorded
 *                Open slots (PENDING, PROCESSING) and staged archives carry `sweepShard` (`UPLOAD#{0-3}` or
 *                `STAGED#{0-3}`) and `sweepAt` (ISO-8601 deadline): the sparse `sweep` index holds only them, so
 *                the upload sweeper finds overdue ones with one Query per shard (`sweepAt <= now`), never a Scan.
 *                Finishing a slot removes both attributes; recording a version deletes its staged item.
 * - deployments: pk `pk`, sk `sk`. Stream → deployment changes (history entries and events of every change).
 *                `{shard}` below is deploymentShardOf(deviceId), 0..DEPLOYMENT_SHARDS-1: a company's hot keys are spread
 *                over DEPLOYMENT_SHARDS partitions (docs/capacity.md), and one device's items all live in one of them.
 *                  pk `ACTIVE#{company}#{shard}`, sk `{deviceId}#{scenarioId}#{version}`   deployment slot: active, or
 *                    undeployed (`undeploy` = who, when, why) until the stream consumer purges it; one device's
 *                    deployments are a `begins_with(sk, "{deviceId}#")` Query on its shard (ids never contain `#`).
 *                    A slot moved from the unsharded key `ACTIVE#{company}` by the local migration carries
 *                    `movedFrom` (the old pk), which tells the stream consumer the move is no deployment change.
 *                  pk `HISTORY#{company}#{deviceId}`, sk `{ulid}`                  history entry; the base table
 *                    partition is the history of one device (ULIDs sort by time: newest first is ScanIndexForward false)
 *                    `gsi1pk` `HISTORY#{company}#{scenarioId}#{shard}`, `gsi1sk` `{ulid}`  history of a scenario (`gsi1`)
 *                    `gsi2pk` `HISTORY#{company}#{shard}`, `gsi2sk` `{ulid}`               history of the company (`gsi2`)
 *                Active items carry no gsi attributes, so both indexes are sparse: history only.
 *
 * History listings (functions/adapters/aws/dynamodb-deployment-history.ts), never a Scan:
 *   deviceId [+ scenarioId [+ version]]   base table, pk of the device (one partition); scenario and version as a
 *                                         FilterExpression
 *   scenarioId [+ version]                `gsi1`, the scenario's DEPLOYMENT_SHARDS partitions merged newest first
 *                                         (sharded-query.ts); version as a FilterExpression
 *   neither                               `gsi2`, the company's DEPLOYMENT_SHARDS partitions merged newest first
 *   `from` / `to`                         `sk BETWEEN` the ULIDs `{time(from)}0000000000000000` and
 *                                         `{time(to - 1 ms)}ZZZZZZZZZZZZZZZZ` (ULIDs sort by their time part)
 * A company's active deployments merge its DEPLOYMENT_SHARDS slot partitions in sort key order the same way. A merged
 * listing's cursor is the last sort key returned; every shard resumes strictly after it, so pages are the same as
 * one unsharded partition would give.
 * A version filter reads the scenario's other versions' entries too (read cost, not correctness; pages are filled
 * by reading on, within a budget of Query calls). It is a filter rather than a third index because every history entry is written
 * once per index (a 5,000-entry request already writes base + 2 index copies), and CloudFormation adds at most one
 * index per table update: `gsi2` alone keeps the change to an existing stack a single deployment. Should per-version
 * reads become hot, a `gsi3` keyed `HISTORY#{company}#{scenarioId}#{version}` can be added in a later deployment.
 *
 * - audit:       pk `pk`, sk `sk` (functions/adapters/aws/dynamodb-audit-log.ts). Administrative changes:
 *                  `ENTRY` / `{ulid}`              the entry (id, at, actor, action, target, companies, before, after)
 *                                                  with `actorKey` = its actor: the `actor` index (`actorKey` / `sk`)
 *                                                  lists one actor's entries newest first. Stream → the administrative
 *                                                  changes consumer (one AdministrativeChange event per entry item).
 *                  `COMPANY#{company}` / `{ulid}`  a copy of the entry (without `actorKey`) for each company it concerns,
 *                                                  so that a company's entries are one Query of its partition.
 *                All entries share the `ENTRY` partition: administrative changes are made by people, a few a minute,
 *                far below DynamoDB's 1,000 writes/s per partition key. The copies are base-table items rather than a
 *                GSI because an entry concerns several companies (a user moved between them) and an index item holds
 *                one key value; an entry of n companies costs n + 1 item writes (doubled: they are one transaction).
 */

import type { TableName } from '../../contract/tables.js';

/** A table's logical name: the tables themselves are listed once, in functions/contract/tables.ts. */
export type { TableName };

/** A consumer of table streams (the local runtime runs one poller per consumer). */
export type StreamConsumer =
  | 'search'
  | 'deployment-changes'
  | 'continuous-rollouts'
  | 'administrative-changes'
  | 'command-changes'
  | 'webhook-deliveries'
  | 'alert-changes'
  | 'rollout-changes';

/** Key schema of one table: partition key and optional sort key (all string attributes). */
export interface TableKeySchema {
  partitionKey: string;
  sortKey?: string;
  /** Global secondary indexes (string keys, all attributes projected). */
  globalSecondaryIndexes?: { indexName: string; partitionKey: string; sortKey: string }[];
  /**
   * Who consumes the table's stream: the search indexer, the deployment changes consumer (history entries and events),
   * the continuous rollouts consumer, the administrative changes consumer (events of audit entries); at most two,
   * DynamoDB Streams' readers per shard. Absent: no stream.
   */
  stream?: StreamConsumer | readonly [StreamConsumer, StreamConsumer];
  /**
   * What the stream's records carry: both images (what changed), or only the new one (a table of items written once,
   * whose consumer reads what was written). @default 'NEW_AND_OLD_IMAGES'
   */
  streamView?: 'NEW_IMAGE' | 'NEW_AND_OLD_IMAGES';
  /** Attribute holding an epoch-seconds expiry that DynamoDB's TTL deletes. */
  timeToLiveAttribute?: string;
}

/** The key design of every table (TABLE_DEFINITIONS), by logical name. */
export const TABLES = {
  companies: { partitionKey: 'companyId' },
  devices: { partitionKey: 'company', sortKey: 'deviceId', stream: ['search', 'continuous-rollouts'] },
  scenarios: {
    partitionKey: 'company',
    sortKey: 'sk',
    // Open upload slots and staged archives by deadline: `UPLOAD#{shard}` / `STAGED#{shard}` / ISO-8601 `sweepAt`.
    globalSecondaryIndexes: [{ indexName: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAt' }],
    stream: 'search',
  },
  deployments: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [
      // History of a scenario: `HISTORY#{company}#{scenarioId}#{shard}` / `{ulid}`.
      { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
      // History of the company: `HISTORY#{company}#{shard}` / `{ulid}`.
      { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    ],
    stream: 'deployment-changes',
  },
  /**
   * A device's last report: pk `deviceKey` = `{company}#{deviceId}`; `lastSeen` (ISO-8601), and while the device is
   * CONNECTED `sweepShard` (`HEARTBEAT#{0..HEARTBEAT_SHARDS-1}`) and `sweepAt` (ISO-8601: lastSeen + the heartbeat
   * window). A small item of its own so that a report whose health did not change writes ~100 bytes, not the device
   * item; the sparse `sweep` index holds only connected devices, so the heartbeat sweeper queries the overdue ones.
   */
  presence: {
    partitionKey: 'deviceKey',
    globalSecondaryIndexes: [{ indexName: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAt' }],
  },
  /**
   * Rollouts (docs/contract.md, "Rollouts"): pk `pk`, sk `sk`.
   *   `ROLLOUT#{company}` / `{rolloutId}`                      the rollout: definition, state, waves
   *   `TARGETS#{company}#{rolloutId}` / `{chunk, 6 digits}`     up to ROLLOUT_CHUNK_SIZE target device ids of one wave
   *                                                            (once run: `results` by cause, `failures` device id → cause,
   *                                                            a COMMAND rollout's `commands` device id → command ids)
   *   `COUNTS#{company}#{rolloutId}#{shard}` / `{wave}`         a wave's tally: deploy results and device reports, or
   *                                                            commands queued and their final states (16 shards)
   *   `REPORT#{company}#{rolloutId}#{deviceId}` / `-`           the first terminal status a device reported (counts once)
   *   `COMMAND#{company}#{rolloutId}#{commandId}` / `-`         a COMMAND rollout's command counted in its final state
   *                                                            (counts once)
   *   `JOINED#{company}#{rolloutId}` / `{deviceId}`              a device that joined a continuous rollout (`wave`, `at`,
   *                                                            `result`; a COMMAND rollout's `commands`)
   * A RUNNING rollout carries `sweepShard` (`ROLLOUT`) and `sweepAt` (ISO-8601): the sparse `sweep` index holds only
   * running rollouts (and scheduled ones, and cancelled COMMAND rollouts whose commands' cancel is not sent yet), so
   * the rollout sweeper finds them with one Query. A RUNNING continuous rollout also carries
   * `continuousCompany` (its company): the sparse `continuous` index holds only those, so a changed device's company's
   * continuous rollouts are one Query.
   * Stream → rollout changes (a rollout paused or completed becomes an event); on AWS only the records of `ROLLOUT#`
   * items reach the function (an event filter), so the tallies' and reports' writes invoke nothing.
   */
  rollouts: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [
      { indexName: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAt' },
      { indexName: 'continuous', partitionKey: 'continuousCompany', sortKey: 'sk' },
    ],
    stream: 'rollout-changes',
  },
  /** Powertools idempotency records of deployment requests (`Idempotency-Key`), expired by TTL after 24 h. */
  idempotency: { partitionKey: 'id', timeToLiveAttribute: 'expiration' },
  /**
   * Failed client authentications of the token endpoint (functions/adapters/aws/dynamodb-client-failure-store.ts): pk
   * `pk` = `{clientId}#{source}` (clientFailureKey), `failures`, `windowEndsAt` (epoch ms) and `expiresAt` (epoch
   * seconds, the window's end), which DynamoDB's TTL deletes. A small table of its own: the token function may write
   * only it, and nothing here outlives its window.
   */
  clientFailures: { partitionKey: 'pk', timeToLiveAttribute: 'expiresAt' },
  /** The audit log of administrative changes (see the module comment). */
  audit: {
    partitionKey: 'pk',
    sortKey: 'sk',
    // One actor's entries: `actorKey` (entry items only, so no copy is listed twice) / `{ulid}`.
    globalSecondaryIndexes: [{ indexName: 'actor', partitionKey: 'actorKey', sortKey: 'sk' }],
    // Items are written once: the consumer needs only what was written.
    stream: 'administrative-changes',
    streamView: 'NEW_IMAGE',
  },
  /**
   * Commands (docs/contract.md, "Commands"): pk `pk` = `{company}#{deviceId}`, sk `sk` = the command's ULID, so a
   * device's commands are one partition, newest first when read backwards. A pending command (QUEUED or DELIVERED)
   * carries `sweepShard` (`COMMAND#{0..COMMAND_SWEEP_SHARDS-1}`, a hash of the device key) and `sweepAt` (its
   * `expiresAt`): the sparse `sweep` index holds only pending commands, so the expiry sweeper queries the overdue ones.
   * Stream → command changes (events, desired state tags, rollout tallies).
   */
  commands: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [{ indexName: 'sweep', partitionKey: 'sweepShard', sortKey: 'sweepAt' }],
    stream: 'command-changes',
  },
  /**
   * Webhooks and their deliveries (docs/webhooks.md):
   *   `WEBHOOK#{company}` / `{webhookId}`                      a webhook, with its signing secrets
   *   `WEBHOOKS#{company}` / `COUNT`                           `webhookCount`: how many the company has (written in
   *                                                            the transaction of each create and delete, bounding it)
   *   `DELIVERY#{company}#{webhookId}` / `{deliveryId}`        one event's delivery to it (newest first when read
   *                                                            backwards), `expiresAt` (epoch seconds) once final
   * Each item carries `entity` (WEBHOOK, WEBHOOK_COUNT, DELIVERY), so that the stream's consumer keeps deliveries only.
   * A PENDING delivery carries `dueShard` (`DUE#{0..WEBHOOK_DUE_SHARDS-1}`, a hash of its pk) and `dueAt` (its
   * nextAttemptAt): the sparse `due` index holds only deliveries waiting for an attempt, so the retry sweeper queries
   * the due ones. Stream → the delivery function (first attempts and redeliveries, as soon as written).
   */
  webhooks: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [{ indexName: 'due', partitionKey: 'dueShard', sortKey: 'dueAt' }],
    stream: 'webhook-deliveries',
    streamView: 'NEW_IMAGE',
    timeToLiveAttribute: 'expiresAt',
  },
  /**
   * Alert rules, what each watches, and alerts (docs/alerts.md):
   *   `RULE#{company}` / `{ruleId}`                            a rule
   *   `WATCH#{company}#{ruleId}` / `{deviceId}`                 a device for which the rule's condition holds: `since`,
   *                                                            and `openAlertId` once raised
   *   `ALERT#{company}` / `{alertId}`                          an alert, OPEN or RESOLVED
   * A watch not raised yet carries `dueShard` and `dueAt` (since + the rule's minutes): the sparse `due` index holds
   * only those, so the alert sweeper raises what is due without scanning the fleet. Stream → alert changes (events).
   */
  alerts: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [{ indexName: 'due', partitionKey: 'dueShard', sortKey: 'dueAt' }],
    stream: 'alert-changes',
  },
  /**
   * API clients (docs/contract.md, "API clients"): pk `clientId`.
   *   `api_{ulid}`                 a client (functions/adapters/aws/dynamodb-api-client-store.ts), with `company`
   *                                and `listed` (`CLIENT`), so that both indexes hold it
   *   `COUNT#{company}`            `clients`: how many the company has, written in the transaction of each create
   *                                and delete (bounding it); it has neither `company` nor `listed`, so no index
   *                                lists it
   * `byCompany` (`company` / `clientId`) lists a company's clients in id (creation) order; `all` (`listed` /
   * `clientId`) lists every client in that order for a platform administrator. Clients are created by people, a few
   * a day, so the one `all` partition stays far below DynamoDB's per-partition write limit.
   */
  apiClients: {
    partitionKey: 'clientId',
    globalSecondaryIndexes: [
      { indexName: 'byCompany', partitionKey: 'company', sortKey: 'clientId' },
      { indexName: 'all', partitionKey: 'listed', sortKey: 'clientId' },
    ],
  },
} as const satisfies Record<TableName, TableKeySchema>;

/**
 * Partitions of the `sweep` index per kind of item. Uploads are rare (the upload API allows 10 requests/s), so a
 * few shards keep every index partition far below DynamoDB's per-partition write limit; the sweeper queries each.
 */
export const SWEEP_SHARDS = 4;

/**
 * Partitions of the presence table's `sweep` index: every connected device's heartbeat rewrites its index entry, so
 * 100,000 devices reporting once a minute (~1,700 writes/s) spread over 16 keys stay near 100 writes/s per key, far
 * below DynamoDB's 1,000 per partition.
 */
export const HEARTBEAT_SHARDS = 16;

/**
 * The shard (0..shards-1) of `value`: a 31-multiplier string hash (unsigned 32 bits) modulo `shards`. Every sharded
 * key of the tables uses it; it is part of the stored keys, so it never changes.
 */
export function shardOf(value: string, shards: number): number {
  let hash = 0;
  for (const character of value) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return hash % shards;
}

/**
 * Partitions of the commands table's `sweep` index: a command rollout to 100,000 devices writes 100,000 index entries
 * in minutes, spread over 16 keys like the heartbeats.
 */
export const COMMAND_SWEEP_SHARDS = 16;

/** The `sweepShard` value of a pending command of the device `{company}#{deviceId}`. */
export function commandShardOf(deviceKey: string): string {
  return `COMMAND#${shardOf(deviceKey, COMMAND_SWEEP_SHARDS)}`;
}

/** The `sweepShard` value of a connected device: a stable hash of `{company}#{deviceId}` into HEARTBEAT_SHARDS. */
export function heartbeatShardOf(deviceKey: string): string {
  return `HEARTBEAT#${shardOf(deviceKey, HEARTBEAT_SHARDS)}`;
}

/** The `sweepShard` value of an item of `kind` with this id (ULID): a stable hash of the id into SWEEP_SHARDS. */
export function sweepShardOf(kind: 'UPLOAD' | 'STAGED', id: string): string {
  return `${kind}#${shardOf(id, SWEEP_SHARDS)}`;
}

/**
 * Partitions of the webhooks table's sparse `due` index: 100 webhooks and 1,000 events a minute make ~1,700 pending
 * deliveries' index writes a second at most, spread over 16 keys like the heartbeats.
 */
export const WEBHOOK_DUE_SHARDS = 16;

/** The `dueShard` value of a PENDING delivery of partition `pk` (`DELIVERY#{company}#{webhookId}`). */
export function webhookDueShardOf(pk: string): string {
  return `DUE#${shardOf(pk, WEBHOOK_DUE_SHARDS)}`;
}

/**
 * Partitions of the alerts table's sparse `due` index (`DUE#{0..ALERT_DUE_SHARDS-1}`): a network outage that
 * disconnects 100,000 kiosks at once writes as many watches in minutes, spread over 8 keys.
 */
export const ALERT_DUE_SHARDS = 8;

/** The `dueShard` value of an alerts table item due for the sweeper (a watch or a rule's recheck), by `{pk}#{sk}`. */
export function alertDueShardOf(key: string): string {
  return `DUE#${shardOf(key, ALERT_DUE_SHARDS)}`;
}

/**
 * Partitions of a company's hot deployment keys: the active slots (`ACTIVE#{company}#{shard}`) and the scenario and
 * company history indexes (`gsi1`, `gsi2`). A 100,000-device rollout writes each of them once per device; spread
 * over 16 keys, each stays far below DynamoDB's 1,000 writes/s per partition (docs/capacity.md). A company-wide
 * listing reads every shard (16 Queries a page at least), so the count is fixed: changing it moves every item.
 */
export const DEPLOYMENT_SHARDS = 16;

/** The shard (0..DEPLOYMENT_SHARDS-1) of a device's deployment items: a stable hash of its id. */
export function deploymentShardOf(deviceId: string): number {
  return shardOf(deviceId, DEPLOYMENT_SHARDS);
}
