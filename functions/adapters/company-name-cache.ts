import type { Company, CompanyRepository } from '../core/shared/companies.js';

/** How long a company read for its display name is reused, ms. */
export const COMPANY_NAME_TTL_MS = 60_000;

/**
 * A read-through cache in front of CompanyRepository for display names (the filters endpoint's `company` values):
 * each company is read at most once per `ttlMs` per process (a warm Lambda container, the local runtime), so the
 * filters endpoint does not wait on DynamoDB per request. A renamed or new company shows within `ttlMs`; companies
 * that do not exist are not cached. Quota and usage figures of the returned items may be up to `ttlMs` old: use it
 * only for names, never where usage matters (uploads read the repository itself).
 */
export class CompanyNameCache implements CompanyRepository {
  private readonly entries = new Map<string, { company: Company; expires: number }>();

  constructor(
    private readonly repository: CompanyRepository,
    private readonly ttlMs = COMPANY_NAME_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** @inheritdoc */
  async get(companyId: string): Promise<Company | undefined> {
    return (await this.getMany([companyId]))[0];
  }

  /** @inheritdoc */
  async getMany(companyIds: readonly string[]): Promise<Company[]> {
    const now = this.now();
    const fresh: Company[] = [];
    const missing: string[] = [];
    for (const id of new Set(companyIds)) {
      const entry = this.entries.get(id);
      if (entry !== undefined && entry.expires > now) fresh.push(entry.company);
      else missing.push(id);
    }
    if (missing.length === 0) return fresh;
    const read = await this.repository.getMany(missing);
    for (const company of read) this.entries.set(company.id, { company, expires: now + this.ttlMs });
    return [...fresh, ...read];
  }
}
