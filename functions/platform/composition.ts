/**
 * The composition root's former single module: its parts now live in composition/ (storage, archives, queue, events,
 * idempotency, identity, cognito, search), one per kind of adapter, so that a function loads only the SDK clients of
 * the adapters it uses. This path re-exports them for the local runtime and older importers.
 */
export { archiveStorage } from './composition/archives.js';
export { eventPublisher } from './composition/events.js';
export { idempotencyStore } from './composition/idempotency.js';
export {
  type AwsDeviceIssuer,
  awsDeviceIssuer,
  type ClientAuthentication,
  clientAuthentication,
  deviceTokenSigner,
  identityProvider,
} from './composition/identity.js';
export { workQueue } from './composition/queue.js';
export { type Services, services } from './composition/services.js';
export { type StorageServices, storage } from './composition/storage.js';
