/**
 * DynamoDB stream images read as the domain's values: what the stream consumers (deployment changes, search indexer,
 * administrative changes) get from a record's `OldImage`, `NewImage` or `Keys`.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AuditEntry } from '../../core/audit/ports.js';
import type { Command } from '../../core/commands/model.js';
import type { DeploymentSlot } from '../../core/deployments/model.js';
import type { StoredRollout } from '../../core/rollouts/model.js';
import type { DocumentKey, SearchDocument } from '../../core/search/documents.js';
import type { StoredDelivery } from '../../core/webhooks/model.js';
import { AUDIT_ENTRY_PARTITION, auditEntryOf } from './dynamodb-audit-log.js';
import { commandFromItem } from './dynamodb-command-repository.js';
import { deliveryFromItem, isDeliveryItem } from './dynamodb-delivery-store.js';
import { deploymentSlotFromItem } from './dynamodb-deployment-repository.js';
import { ROLLOUT_PARTITION_PREFIX, rolloutFromItem } from './rollout-items.js';
import { documentKeyFromItem, searchDocumentFromItem } from './search-documents.js';

/** A stream image: the item in DynamoDB's attribute-value form (absent for a record without one). */
export type StreamImage = Record<string, AttributeValue> | undefined;

/** The deployment slot an image of the deployments table holds, or undefined (no image, or not an active slot item). */
export function deploymentSlotFromImage(image: StreamImage): DeploymentSlot | undefined {
  return deploymentSlotFromItem(image === undefined ? undefined : unmarshall(image));
}

/** The command of an image of the commands table, or undefined for no image or another item (the local stream anchor). */
export function commandFromImage(image: StreamImage): Command | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image);
  return typeof item.id === 'string' && typeof item.state === 'string' ? commandFromItem(item) : undefined;
}

/** The webhook delivery an image of the webhooks table holds, or undefined (no image, or a webhook or count item). */
export function deliveryFromImage(image: StreamImage): StoredDelivery | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image);
  return isDeliveryItem(item) ? deliveryFromItem(item) : undefined;
}

/** The search document of an image of the devices or scenarios table, or undefined when the item is not searchable. */
export function searchDocumentFromImage(image: StreamImage): SearchDocument | undefined {
  return searchDocumentFromItem(unmarshall(image ?? {}));
}

/** The search document key an image's item would have, or undefined when its kind is not searchable. */
export function documentKeyFromImage(image: StreamImage): DocumentKey | undefined {
  return documentKeyFromItem(unmarshall(image ?? {}));
}

/**
 * The audit entry an image of the audit table holds, or undefined when it holds none: no image, or another item (a
 * company's copy of an entry, the stream's anchor).
 */
export function auditEntryFromImage(image: StreamImage): AuditEntry | undefined {
  if (image === undefined) return undefined;
  const item = unmarshall(image);
  return item.pk === AUDIT_ENTRY_PARTITION ? auditEntryOf(item) : undefined;
}

/**
 * The rollout an image of the rollouts table holds, or undefined for no image or another item (targets, tallies,
 * reports, members, the stream's anchor): only `ROLLOUT#…` partitions hold rollouts.
 */
export function rolloutFromImage(image: StreamImage): StoredRollout | undefined {
  if (image === undefined || image.pk?.S?.startsWith(ROLLOUT_PARTITION_PREFIX) !== true) return undefined;
  return rolloutFromItem(unmarshall(image));
}
