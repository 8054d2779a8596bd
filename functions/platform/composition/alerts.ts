/**
 * The alerts side of the composition root: the alert rules, watches and alerts over the alerts table (on the storage
 * module's document client and cursor codec), and how the alerts table's stream images are read.
 */
import { DynamoDbAlertRuleStore } from '../../adapters/aws/dynamodb-alert-rule-store.js';
import { alertTableChangeOf, DynamoDbAlertStore } from '../../adapters/aws/dynamodb-alert-store.js';
import { ENV, readEnvironment } from '../../contract/environment.js';
import type { AlertRuleStore, AlertStore } from '../../core/alerts/ports.js';
import { storage } from './storage.js';

export { alertTableChangeOf };

/** The alert rules and the watches and alerts of the alerts table. */
export interface AlertServices {
  rules: AlertRuleStore;
  alerts: AlertStore;
}

let built: AlertServices | undefined;

/**
 * Builds (once) and returns the alert stores, on storage()'s client.
 * @throws EnvironmentError naming every missing or malformed storage variable (ALERTS_TABLE among them).
 */
export function alertStorage(): AlertServices {
  if (built === undefined) {
    const { dynamoDb, cursors } = storage();
    const table = readEnvironment('storage', process.env)[ENV.alertsTable];
    built = { rules: new DynamoDbAlertRuleStore(dynamoDb, table), alerts: new DynamoDbAlertStore(dynamoDb, table, cursors) };
  }
  return built;
}
