import { describe, expect, it } from 'vitest';
import { CompanyNameCache } from '../../../functions/adapters/company-name-cache.js';
import type { Company, CompanyRepository } from '../../../functions/core/shared/companies.js';

class CountingCompanies implements CompanyRepository {
  readonly calls: string[][] = [];
  constructor(readonly companies: Map<string, Company>) {}
  async get(companyId: string): Promise<Company | undefined> {
    return this.companies.get(companyId);
  }
  async getMany(companyIds: readonly string[]): Promise<Company[]> {
    this.calls.push([...companyIds]);
    return companyIds.flatMap((id) => (this.companies.has(id) ? [this.companies.get(id)!] : []));
  }
}

const company = (id: string, name: string): Company => ({ id, name, quotaBytes: 1_000, usedBytes: 0 });

describe('CompanyNameCache', () => {
  it('reads each company once per TTL, then again after it expires (a rename shows)', async () => {
    let clock = 0;
    const backing = new CountingCompanies(
      new Map([
        ['acme', company('acme', 'Acme Retail')],
        ['globex', company('globex', 'Globex')],
      ]),
    );
    const cache = new CompanyNameCache(backing, 60_000, () => clock);
    expect((await cache.getMany(['acme', 'globex'])).map((item) => item.name).sort()).toEqual(['Acme Retail', 'Globex']);
    clock = 59_999;
    expect((await cache.getMany(['globex', 'acme'])).map((item) => item.name).sort()).toEqual(['Acme Retail', 'Globex']);
    expect(backing.calls).toEqual([['acme', 'globex']]);
    backing.companies.set('acme', company('acme', 'Acme Stores'));
    clock = 60_000;
    expect((await cache.get('acme'))?.name).toBe('Acme Stores');
    expect(backing.calls).toEqual([['acme', 'globex'], ['acme']]);
  });

  it('reads only the companies it does not hold, and never caches an unknown company', async () => {
    const backing = new CountingCompanies(new Map([['acme', company('acme', 'Acme Retail')]]));
    const cache = new CompanyNameCache(backing);
    await cache.getMany(['acme']);
    expect(await cache.getMany(['acme', 'initech'])).toEqual([company('acme', 'Acme Retail')]);
    backing.companies.set('initech', company('initech', 'Initech'));
    expect((await cache.getMany(['acme', 'initech'])).map((item) => item.id).sort()).toEqual(['acme', 'initech']);
    expect(backing.calls).toEqual([['acme'], ['initech'], ['initech']]);
  });
});
