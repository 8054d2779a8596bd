/** Ports of the alerts area: the alerts table's rules, watches and alerts (key design in adapters/aws/tables.ts). */
import type { Page } from '../shared/paging.js';
import type { Alert, AlertState, AlertWatch, StoredAlertRule } from './model.js';

/** Alert rules: `RULE#{company}` items, at most MAX_ALERT_RULES_PER_COMPANY per company. */
export interface AlertRuleStore {
  /**
   * Writes a new rule, counted against `max` in the same transaction (the company's rule count).
   * @returns `created`, or `full` when the company already has `max` rules (nothing written).
   */
  create(rule: StoredAlertRule, max: number): Promise<'created' | 'full'>;
  /** Every rule of a company, oldest first (one Query: at most MAX_ALERT_RULES_PER_COMPANY). */
  list(company: string): Promise<StoredAlertRule[]>;
  /** One rule (a strongly consistent read), or undefined. */
  get(company: string, ruleId: string): Promise<StoredAlertRule | undefined>;
  /** Replaces a rule while its `updated` is still `expectedUpdated`. @returns false when it changed or is gone. */
  replace(rule: StoredAlertRule, expectedUpdated: string): Promise<boolean>;
  /**
   * Ends a rule's pending recheck (its `recheckAt`, out of the `due` index) while it is still at `revision`.
   * @returns false when the rule changed revision or is gone (nothing written).
   */
  rechecked(company: string, ruleId: string, revision: string): Promise<boolean>;
  /** Deletes a rule and uncounts it. @returns the rule deleted, or undefined when there was none. */
  delete(company: string, ruleId: string): Promise<StoredAlertRule | undefined>;
}

/** What a write of the evaluation did. */
export type WatchOutcome =
  /** Written now. */
  | 'written'
  /**
   * Refused, and nothing written: already written (a replayed change), the watch changed meanwhile, or the rule's
   * revision is no longer the one evaluated (changed or deleted).
   */
  | 'skipped';

/** A watch due for raising, as the `due` index lists it. */
export type DueWatch = Pick<AlertWatch, 'company' | 'ruleId' | 'deviceId' | 'since' | 'revision'>;

/** What the `due` index lists: a watch due for raising, or a rule (at `revision`) due for its recheck. */
export type DueEntry = ({ kind: 'watch' } & DueWatch) | { kind: 'recheck'; company: string; ruleId: string; revision: string };

/** Watches and alerts (`WATCH#…` and `ALERT#…` items). */
export interface AlertStore {
  /** The watch of a rule on a device (a strongly consistent read), or undefined. */
  watch(company: string, ruleId: string, deviceId: string): Promise<AlertWatch | undefined>;
  /**
   * Starts a watch not raised yet (with its `dueAt`): one transaction, the rule still at `watch.revision` and no watch
   * of the rule on the device yet.
   */
  startWatch(watch: AlertWatch): Promise<WatchOutcome>;
  /**
   * Raises `alert` (OPEN, its id derived from the watch's since): one transaction, the rule still at `watch.revision`,
   * the alert's id new, and the watch written with `openAlertId` out of the `due` index: created when `existing` is
   * false (a condition already due when it starts), else updated while its `since` is the same and it is not raised.
   */
  raise(watch: AlertWatch, alert: Alert, existing: boolean): Promise<WatchOutcome>;
  /**
   * Ends a watch: deletes it while it is as read (same `since`, same `openAlertId` or none), and makes its open alert
   * RESOLVED at `at` (one transaction).
   */
  resolve(watch: AlertWatch, at: string): Promise<WatchOutcome>;
  /**
   * Watches not raised and rules' rechecks whose `dueAt` is at or before `now` (the sparse `due` index), at most
   * `limit`.
   */
  due(now: string, limit: number): Promise<DueEntry[]>;
  /** A page of a rule's watches (its one partition), `cursor` from the previous page. */
  watchesOf(company: string, ruleId: string, cursor: string | undefined): Promise<{ items: AlertWatch[]; cursor?: string }>;
  /** A company's alerts, newest first by since when, OPEN or RESOLVED only when `state` is given. */
  listAlerts(company: string, state: AlertState | undefined, limit: number, cursor: string | undefined): Promise<Page<Alert>>;
  /** One alert, or undefined. */
  getAlert(company: string, alertId: string): Promise<Alert | undefined>;
}
