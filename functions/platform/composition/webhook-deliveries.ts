/**
 * The delivery side of webhooks in the composition root, apart from the API's (webhooks.ts) so that only the delivery
 * functions bundle the HTTP sender: what attempts deliveries.
 */
import { HttpWebhookSender } from '../../adapters/webhook-sender.js';
import { DEFAULT_DELIVERY_OPTIONS, type DeliveryOptions, type DeliveryPorts } from '../../core/webhooks/delivery.js';
import { auditedWebhookStore, deliveryStore, webhookSettings } from './webhooks.js';

let engine: { ports: DeliveryPorts; options: DeliveryOptions } | undefined;

/**
 * What the delivery functions attempt deliveries with (built once): the stores (the webhooks' writing a webhook
 * disabled after failing for days with its audit entry), the SSRF-guarded HTTP sender with
 * WEBHOOK_ALLOWED_HTTP_HOSTS, and the production options
 * with the retry schedule divided by WEBHOOK_RETRY_DIVISOR (1 but in local tests).
 * @throws EnvironmentError naming every missing or malformed storage, audit or webhook variable.
 */
export function deliveryEngine(): { ports: DeliveryPorts; options: DeliveryOptions } {
  if (engine === undefined) {
    const { allowedHttpHosts, retryDivisor } = webhookSettings();
    engine = {
      ports: {
        webhooks: auditedWebhookStore(),
        deliveries: deliveryStore(),
        sender: new HttpWebhookSender({ allowedHttpHosts }),
      },
      options: { ...DEFAULT_DELIVERY_OPTIONS, retryScale: 1 / retryDivisor },
    };
  }
  return engine;
}
