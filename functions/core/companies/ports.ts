/** Ports of companies administration (functions/core/companies/admin.ts). */
import type { Company } from '../shared/companies.js';
import type { Page } from '../shared/paging.js';

/** What an administrator may change of a company (at least one member). */
export interface CompanyChanges {
  name?: string;
  quotaBytes?: number;
}

/** Company records as administration reads and writes them (companies table). */
export interface CompanyAdministration {
  /** Creates the company with `usedBytes` 0 unless one with its id exists. @returns false when it exists (nothing written). */
  create(company: Omit<Company, 'usedBytes'>): Promise<boolean>;
  /** Returns the company, or undefined when it does not exist. */
  get(companyId: string): Promise<Company | undefined>;
  /**
   * A page of every company, in no meaningful order (the table's own), continuing after `cursor` (a `nextCursor` of
   * this listing).
   * @throws BadRequestError when the cursor was not issued by this listing.
   */
  list(limit: number, cursor: string | undefined): Promise<Page<Company>>;
  /**
   * Changes the company's name and/or quota, leaving `usedBytes` as it is.
   * @returns the company after the change, or undefined when it does not exist (nothing written).
   */
  update(companyId: string, changes: CompanyChanges): Promise<Company | undefined>;
}

/** Counts a company's devices (devices table). */
export interface DeviceCounter {
  /** The number of devices the company has registered. */
  count(companyId: string): Promise<number>;
}
