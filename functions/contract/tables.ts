/**
 * The service's DynamoDB tables, each defined once: its logical name (TableName: what a definition's `access.tables`
 * grants and what the key design, functions/adapters/aws/tables.ts, describes), the environment variable a function
 * reads its physical name from, and the construct id the stateful stack creates it under. The stacks, the grants, the
 * key design and the local runtime read the list from here, so a table added here is one the compiler asks each of
 * them about.
 */
/** What identifies one table outside the key design. */
export interface TableIdentity {
  /** The variable its physical name is read from (ENV names it by this). */
  env: string;
  /** Its construct id in the stateful stack: part of its CloudFormation logical id, so it never changes. */
  constructId: string;
}

/** Every table, by logical name, in the order the stacks create them and add their streams' event sources. */
export const TABLE_DEFINITIONS = {
  companies: { env: 'COMPANIES_TABLE', constructId: 'CompaniesTable' },
  devices: { env: 'DEVICES_TABLE', constructId: 'DevicesTable' },
  scenarios: { env: 'SCENARIOS_TABLE', constructId: 'ScenariosTable' },
  deployments: { env: 'DEPLOYMENTS_TABLE', constructId: 'DeploymentsTable' },
  presence: { env: 'PRESENCE_TABLE', constructId: 'PresenceTable' },
  rollouts: { env: 'ROLLOUTS_TABLE', constructId: 'RolloutsTable' },
  idempotency: { env: 'IDEMPOTENCY_TABLE', constructId: 'IdempotencyTable' },
  clientFailures: { env: 'CLIENT_FAILURES_TABLE', constructId: 'ClientFailuresTable' },
  audit: { env: 'AUDIT_TABLE', constructId: 'AuditTable' },
  commands: { env: 'COMMANDS_TABLE', constructId: 'CommandsTable' },
  webhooks: { env: 'WEBHOOKS_TABLE', constructId: 'WebhooksTable' },
  alerts: { env: 'ALERTS_TABLE', constructId: 'AlertsTable' },
  apiClients: { env: 'API_CLIENTS_TABLE', constructId: 'ApiClientsTable' },
} as const satisfies Record<string, TableIdentity>;

/** A table's logical name. */
export type TableName = keyof typeof TABLE_DEFINITIONS;

/** Every table's logical name, in the order of TABLE_DEFINITIONS. */
export const TABLE_NAMES: readonly TableName[] = Object.keys(TABLE_DEFINITIONS) as TableName[];

/** The variable each table's physical name is read from. */
export const TABLE_ENV: { readonly [Name in TableName]: (typeof TABLE_DEFINITIONS)[Name]['env'] } = Object.fromEntries(
  TABLE_NAMES.map((name) => [name, TABLE_DEFINITIONS[name].env]),
) as { readonly [Name in TableName]: (typeof TABLE_DEFINITIONS)[Name]['env'] };
