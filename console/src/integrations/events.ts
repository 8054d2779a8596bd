/**
 * The event types a webhook may subscribe to, as the Integrations page offers them: each with what it means in
 * words. The list is the service's (docs/webhooks.md); the type check below fails the build when the API's list and
 * this one differ.
 */
import type { WebhookEventType } from './api.js';

/** Each event type, in the order the form lists them, with what it means. */
export const EVENT_TYPES = [
  { type: 'deployment.succeeded', words: 'A device installed a scenario version' },
  { type: 'deployment.failed', words: 'A device failed to install a scenario version' },
  { type: 'device.connected', words: 'A device connected' },
  { type: 'device.disconnected', words: 'A device stopped reporting' },
  { type: 'rollout.paused', words: 'A rollout paused (failure threshold, wave timeout, or by hand)' },
  { type: 'rollout.completed', words: 'A rollout finished' },
  { type: 'command.succeeded', words: 'A command succeeded' },
  { type: 'command.failed', words: 'A command failed' },
  { type: 'command.expired', words: 'A command expired before the device answered' },
  { type: 'alert.raised', words: 'An alert rule raised an alert' },
  { type: 'alert.resolved', words: 'An alert was resolved' },
  { type: 'webhook.test', words: 'A test event (Send test event)' },
] as const satisfies readonly { type: WebhookEventType; words: string }[];

/** True when every type of the API is offered: the assignment below fails to compile otherwise. */
type EveryTypeOffered = Exclude<WebhookEventType, (typeof EVENT_TYPES)[number]['type']> extends never ? true : false;
const everyTypeOffered: EveryTypeOffered = true;
void everyTypeOffered;
