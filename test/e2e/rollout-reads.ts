/**
 * What the rollout tests read back through the API with a user's typed client: a rollout, and the targets whose device
 * reported FAILED; and what the rollout composer's preview should show for a search (the filters endpoint's counts),
 * with the preview's tables as the page shows them.
 */
import type { Page } from 'playwright-core';
import { type components, expectOk, type operations } from '../../client/index.js';
import type { clientFor } from './harness.js';

type Client = ReturnType<typeof clientFor>;
type Rollout = components['schemas']['Rollout'];
type RolloutTarget = components['schemas']['RolloutTarget'];

/** The rollout as the client's user reads it. */
export async function readRollout(client: Client, company: string, rolloutId: string): Promise<Rollout> {
  return expectOk(
    await client.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', { params: { path: { companyId: company, rolloutId } } }),
  );
}

/** Every target whose device reported FAILED, followed through the listing's cursors. */
export async function failedTargets(client: Client, company: string, rolloutId: string): Promise<RolloutTarget[]> {
  const items: RolloutTarget[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await client.main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}/targets', {
        params: { path: { companyId: company, rolloutId }, query: { deviceStatus: 'FAILED', ...(cursor === undefined ? {} : { cursor }) } },
      }),
    );
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/**
 * The breakdown the composer's preview should show for a search of `filters`, by caption (each field of `fields`):
 * the filters endpoint's counts for the same query, where a field the query selects keeps only its selected values
 * (its counts leave its own selection out, so its other values count devices that are not targets), and values of no
 * device are left out.
 */
export async function expectedBreakdown(
  client: Client,
  filters: Record<string, string[]>,
  fields: readonly string[],
): Promise<Record<string, string[][]>> {
  const query = { ...filters, type: 'DEVICE' } as unknown as operations['SearchFilters']['parameters']['query'];
  const descriptors = expectOk(await client.main.GET('/resources/search/filters', { params: { query } })).items;
  const tables: Record<string, string[][]> = {};
  for (const field of fields) {
    const descriptor = descriptors.find((candidate) => candidate.field === field);
    if (descriptor === undefined) continue;
    const values = filters[field] ?? [];
    tables[descriptor.name] = descriptor.definition.parameters
      .filter((parameter) => parameter.count > 0 && (values.length === 0 || values.includes(parameter.value)))
      .map((parameter) => [parameter.name, parameter.count.toLocaleString('en-US')]);
  }
  return tables;
}

/** The composer preview's tables as the page shows them: caption → rows of cells. */
export function previewTables(page: Page): Promise<Record<string, string[][]>> {
  return page.evaluate(`Object.fromEntries([...document.querySelectorAll('.compose-preview table')].map((table) =>
    [table.querySelector('caption').textContent,
     [...table.querySelectorAll('tbody tr')].map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent))]))`);
}
