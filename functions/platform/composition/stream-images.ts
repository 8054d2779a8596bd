/**
 * How the stream consumers read DynamoDB stream images, chosen here with the rest of the adapters: the tables' item
 * formats belong to the DynamoDB adapters, so the handlers get their readers from the composition root.
 */
export {
  auditEntryFromImage,
  commandFromImage,
  deliveryFromImage,
  deploymentSlotFromImage,
  documentKeyFromImage,
  rolloutFromImage,
  type StreamImage,
  searchDocumentFromImage,
} from '../../adapters/aws/stream-images.js';
