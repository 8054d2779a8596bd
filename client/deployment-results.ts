/**
 * Reading a deployments answer for people, the same in every client (the CLI, the console): the result items counted
 * per state and cause, and what each failure cause means.
 */
import type { components } from './api-types.js';

/** One result item of `POST /companies/{companyId}/resources/deployments`. */
export type DeploymentResultItem = components['schemas']['DeploymentResultItem'];

/** One line of a summary: how many items ended in a state with a cause. */
export interface SummaryLine {
  state: 'SUCCESS' | 'FAILURE';
  /** null for SUCCESS. */
  cause: string | null;
  count: number;
}

/** Counts the items per (state, cause): SUCCESS first, then the failures, most frequent first. */
export function summarize(items: readonly Pick<DeploymentResultItem, 'state' | 'cause'>[]): SummaryLine[] {
  const counts = new Map<string, SummaryLine>();
  for (const item of items) {
    const key = `${item.state} ${item.cause ?? ''}`;
    const line = counts.get(key) ?? { state: item.state, cause: item.cause, count: 0 };
    line.count += 1;
    counts.set(key, line);
  }
  return [...counts.values()].sort(
    (a, b) =>
      (a.state === 'SUCCESS' ? 0 : 1) - (b.state === 'SUCCESS' ? 0 : 1) ||
      b.count - a.count ||
      String(a.cause).localeCompare(String(b.cause)),
  );
}

/** What each failure cause means, for the list of failed items. */
export const CAUSE_MESSAGES: Readonly<Record<string, string>> = {
  NONE: 'The action failed without a specific cause.',
  TARGET_NOT_FOUND: 'No such device in the company.',
  WHAT_NOT_FOUND: 'No such scenario version: upload it first.',
  ALREADY_DEPLOYED: 'This version is already deployed on the device.',
  ALREADY_UNDEPLOYED: 'This version is not deployed on the device.',
  NOT_IMPLEMENTED: 'Unsupported target or scenario type.',
};
