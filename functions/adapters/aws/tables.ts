/**
 * DynamoDB key design, shared by the adapters, the local table creation and the CDK stack.
 *
 * - companies:   pk `companyId`.                      Item: name, quotaBytes, usedBytes.
 * - devices:     pk `company`, sk `deviceId`.          Item: the device resource. Stream → search indexer.
 * - scenarios:   pk `company`, sk `sk`:
 *                  `SCENARIO#{scenarioId}`             summary (name, latestVersion, versions); stream → search indexer
 *                  `VERSION#{scenarioId}#{version}`    immutable version (size, sha256, archiveKey, uploadedBy, created)
 * - deployments: pk `pk`, sk `sk`:
 *                  pk `ACTIVE#{company}`, sk `{deviceId}#{scenarioId}#{version}`   active deployment; one device's
 *                    deployments are a `begins_with(sk, "{deviceId}#")` Query (ids never contain `#`)
 *                  pk `HISTORY#{company}#{deviceId}`, sk `{ulid}`                  history of a device, oldest first;
 *                    `gsi1pk` `HISTORY#{company}#{scenarioId}#{version}`, `gsi1sk` `{ulid}`: history of a version
 */

/** Key schema of one table: partition key and optional sort key (all string attributes). */
export interface TableKeySchema {
  partitionKey: string;
  sortKey?: string;
  /** Global secondary indexes (string keys, all attributes projected). */
  globalSecondaryIndexes?: { indexName: string; partitionKey: string; sortKey: string }[];
  /** Whether the table streams NEW_AND_OLD_IMAGES to the search indexer. */
  streamsToSearch: boolean;
}

/** The four tables, by logical name. */
export const TABLES = {
  companies: { partitionKey: 'companyId', streamsToSearch: false },
  devices: { partitionKey: 'company', sortKey: 'deviceId', streamsToSearch: true },
  scenarios: { partitionKey: 'company', sortKey: 'sk', streamsToSearch: true },
  deployments: {
    partitionKey: 'pk',
    sortKey: 'sk',
    globalSecondaryIndexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
    streamsToSearch: false,
  },
} as const satisfies Record<string, TableKeySchema>;

/** Logical table name. */
export type TableName = keyof typeof TABLES;
