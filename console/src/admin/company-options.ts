/**
 * The companies an administrator may pick in the users forms: every company for a platform administrator
 * (`companies:read`: read from `GET /admin/companies`, every page, as companies are few), else the companies of their
 * token (a company administrator manages the users of those only).
 */
import { type Signal, useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, can, claims, problemText } from '../session.js';

/** A company to choose: its id and, when the listing gave it, its name. */
export interface CompanyOption {
  id: string;
  name?: string;
}

/** A company option as a select or checkbox shows it: `acme (Acme Retail)`, or the id alone. */
export function optionLabel(option: CompanyOption): string {
  return option.name === undefined || option.name === option.id ? option.id : `${option.id} (${option.name})`;
}

/** The companies to choose from, in id order, and why they could not be read (null when they could). */
export function useCompanyOptions(): { options: Signal<CompanyOption[]>; failure: Signal<string | null> } {
  const own = claims.value?.companies ?? [];
  const options = useSignal<CompanyOption[]>(own.map((id) => ({ id })));
  const failure = useSignal<string | null>(null);
  const everyCompany = can('companies:read');
  useEffect(() => {
    if (!everyCompany) return;
    let current = true;
    void (async () => {
      const found: CompanyOption[] = [];
      let cursor: string | undefined;
      try {
        do {
          const { data, error, response } = await api.main.GET('/admin/companies', {
            params: { query: cursor === undefined ? {} : { cursor } },
          });
          if (data === undefined) {
            if (current) failure.value = problemText(error, response.status);
            return;
          }
          found.push(...data.items.map((company) => ({ id: company.id, name: company.name })));
          cursor = data.nextCursor ?? undefined;
        } while (cursor !== undefined && current);
      } catch {
        if (current) failure.value = problemText(undefined);
        return;
      }
      if (current) options.value = found.sort((a, b) => a.id.localeCompare(b.id));
    })();
    return () => {
      current = false;
    };
  }, [everyCompany]);
  return { options, failure };
}
