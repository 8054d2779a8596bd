/** Where the Alerts page links: an alert's device page, and the fleet page with a rule's search. */
import { hrefOf } from '../router.js';
import type { Alert } from './api.js';

/** The page of an alert's device. */
export function alertDeviceHref(alert: Alert): string {
  return hrefOf(`/devices/${encodeURIComponent(alert.company)}/${encodeURIComponent(alert.target.id)}`);
}

/** The fleet page with a rule's query (its filters, as the fleet's URL takes them). */
export function ruleFleetHref(query: string): string {
  return hrefOf('/fleet', new URLSearchParams(query));
}
