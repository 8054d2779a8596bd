/** Where the Alerts page links: an alert's device page, and the fleet page with a rule's search. */
import { hrefOf } from '../router.js';
import type { Alert } from './api.js';

/** The page of an alert's device, at the hub or sub-device that holds the condition when the alert names one. */
export function alertDeviceHref(alert: Alert): string {
  const path = `/devices/${encodeURIComponent(alert.company)}/${encodeURIComponent(alert.target.id)}`;
  return hrefOf(path, alert.target.subId === undefined ? undefined : { sub: alert.target.subId });
}

/** The fleet page with a rule's query (its filters, as the fleet's URL takes them). */
export function ruleFleetHref(query: string): string {
  return hrefOf('/fleet', new URLSearchParams(query));
}
