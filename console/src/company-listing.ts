/**
 * What the pages that list one company's resources page by page share (scenarios, rollouts): the company the URL
 * names, made explicit when it names none, and the listing's page size as the URL gives it.
 */
import { useEffect } from 'preact/hooks';
import { navigate } from './router.js';

/** The `limit` of the URL when it is one the API's listings take (1 to 1,000), else undefined (the API's default). */
export function limitOf(query: URLSearchParams): number | undefined {
  const value = Number(query.get('limit'));
  return Number.isInteger(value) && value >= 1 && value <= 1000 ? value : undefined;
}

/**
 * Writes the token's first company (`first`) into the URL of the page at `path` when it names none, replacing the
 * entry (Back skips it), so that the address says which company is shown.
 */
export function useDefaultCompany(path: string, company: string, first: string | undefined, query: URLSearchParams): void {
  useEffect(() => {
    if (company === '' && first !== undefined) {
      const next = new URLSearchParams(query);
      next.set('company', first);
      navigate(path, next, true);
    }
  }, [company, first]);
}
