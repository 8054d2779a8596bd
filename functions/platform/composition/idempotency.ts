/** The idempotency store of the composition root (Powertools persistence on a DynamoDB table). */
import { createDynamoDbClient } from '../../adapters/aws/clients.js';
import { CompressedDynamoDbPersistenceLayer } from '../../adapters/aws/dynamodb-idempotency-store.js';
import { idempotencyConfig } from '../config.js';
import { traced } from '../observability.js';

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
