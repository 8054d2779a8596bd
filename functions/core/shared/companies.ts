/** Companies and their storage accounts (companies table): read by scenario uploads and search. */

/** A company and its storage account (bytes). */
export interface Company {
  id: string;
  name: string;
  /** Storage quota for scenario archives, bytes. */
  quotaBytes: number;
  /** Bytes of stored archives, bytes. */
  usedBytes: number;
}

/** Company records (companies table). */
export interface CompanyRepository {
  /** Returns the company, or undefined when it does not exist. */
  get(companyId: string): Promise<Company | undefined>;
  /** Returns the companies that exist among `companyIds`, in no particular order. */
  getMany(companyIds: readonly string[]): Promise<Company[]>;
}
