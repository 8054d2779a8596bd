/** Ports of companies administration (functions/core/companies/admin.ts). */
import type { AuditEntry } from '../audit/ports.js';
import type { Company } from '../shared/companies.js';
import type { Page } from '../shared/paging.js';

/** What an administrator may change of a company (at least one member). */
export interface CompanyChanges {
  name?: string;
  quotaBytes?: number;
}

/** Company records as administration reads and writes them (companies table), each change with its audit entry. */
export interface CompanyAdministration {
  /**
   * Creates the company with `usedBytes` 0 unless one with its id exists, and records `entry` with it: both or neither.
   * @returns false when it exists (nothing written, no entry).
   */
  create(company: Omit<Company, 'usedBytes'>, entry: AuditEntry): Promise<boolean>;
  /** Returns the company, or undefined when it does not exist. */
  get(companyId: string): Promise<Company | undefined>;
  /**
   * A page of every company, in no meaningful order (the table's own), continuing after `cursor` (a `nextCursor` of
   * this listing).
   * @throws BadRequestError when the cursor was not issued by this listing.
   */
  list(limit: number, cursor: string | undefined): Promise<Page<Company>>;
  /**
   * Changes the company's name and/or quota, leaving `usedBytes` as it is, and records the entry `entryOf` makes of
   * the company before and after the change: both or neither. `entryOf` may be called again when another change came
   * in between (the entry then describes the change that was made).
   * @returns the company after the change, or undefined when it does not exist (nothing written, no entry).
   */
  update(
    companyId: string,
    changes: CompanyChanges,
    entryOf: (before: Company, after: Company) => AuditEntry,
  ): Promise<Company | undefined>;
}

/** Counts a company's devices (devices table). */
export interface DeviceCounter {
  /** The number of devices the company has registered. */
  count(companyId: string): Promise<number>;
}
