import { eventHandler } from '../platform/observability.js';

/**
 * Placeholder so that the stacks synthesize on this branch: the heartbeat sweeper (HEARTBEAT_SWEEPER) is built on
 * the device health branch, whose file replaces this one. Invoked, it fails, so its alarms would say so.
 */
export const handler = eventHandler<unknown, void>().handler(async () => {
  throw new Error('The heartbeat sweeper is not built on this branch.');
});
