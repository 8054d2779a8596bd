/**
 * The API clients side of the composition root: the clients over the apiClients table (on the storage module's
 * document client and cursor codec).
 */
import { DynamoDbApiClientStore } from '../../adapters/aws/dynamodb-api-client-store.js';
import { ENV, readEnvironment } from '../../contract/environment.js';
import type { ApiClientStore } from '../../core/clients/ports.js';
import { storage } from './storage.js';

let built: ApiClientStore | undefined;

/**
 * The API clients (built once, on storage()'s client).
 * @throws EnvironmentError naming every missing or malformed storage variable (API_CLIENTS_TABLE among them).
 */
export function apiClientStore(): ApiClientStore {
  if (built === undefined) {
    const { dynamoDb, cursors } = storage();
    built = new DynamoDbApiClientStore(dynamoDb, readEnvironment('storage', process.env)[ENV.apiClientsTable], cursors);
  }
  return built;
}
