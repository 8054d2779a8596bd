/**
 * The advertised command filter (`health.hubs.devices.commands.command`) from query string to answer: the search and
 * filters routes accept it, the filters endpoint lists the commands the demo kiosks' sub-devices advertise with their
 * counts (each field counted without its own selection), and a search on one finds exactly the kiosks counted. The
 * engines agree on it by the SearchIndex contract suite; this is the use cases over the embedded engine.
 */
import { describe, expect, it } from 'vitest';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { search } from '../../../functions/contract/routes/search.js';
import { searchFilters } from '../../../functions/contract/routes/search-filters.js';
import { deviceDocumentOf } from '../../../functions/core/search/documents.js';
import { describeFilters, searchResources } from '../../../functions/core/search/service.js';
import type { CompanyRepository } from '../../../functions/core/shared/companies.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { DEMO_COMPANIES, DEMO_DEVICES_PER_COMPANY, DEMO_SEED } from '../../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../../functions/local/demo-fleet.js';
import { queryOf } from '../../support/route-input.js';

const FIELD = 'health.hubs.devices.commands.command';
const olivia: Principal = { subject: 'olivia', companies: ['acme', 'globex'], scopes: new Set(['search:read']) };
const companies: CompanyRepository = {
  get: async () => undefined,
  getMany: async () => [],
};

async function demoIndex(): Promise<EmbeddedSearchIndex> {
  const index = new EmbeddedSearchIndex();
  for (const company of DEMO_COMPANIES) {
    await index.upsert(generateDemoDevices(company, DEMO_DEVICES_PER_COMPANY, DEMO_SEED).map(deviceDocumentOf));
  }
  return index;
}

/** The advertised command descriptor of the filters endpoint for this query string. */
async function commandDescriptor(index: EmbeddedSearchIndex, pairs: [string, string][]) {
  const { items } = await describeFilters({ index, companies }, olivia, queryOf(searchFilters, pairs));
  return items.find((item) => item.field === FIELD);
}

describe('the advertised command filter', () => {
  it('is listed by the filters endpoint with the demo commands, their counts equal to the search totals', async () => {
    const index = await demoIndex();
    const descriptor = await commandDescriptor(index, [['type', 'DEVICE']]);
    expect(descriptor).toMatchObject({ field: FIELD, name: 'Advertised command', scope: 'DEVICE', definition: { type: 'ENUMERATION' } });
    const parameters = descriptor?.definition.parameters ?? [];
    expect(parameters.map((parameter) => parameter.value)).toEqual(expect.arrayContaining(['print-test-page', 'reboot', 'open-locker']));
    for (const { name, value, count } of parameters) {
      expect(name).toBe(value);
      const found = await searchResources(index, olivia, queryOf(search, [[FIELD, value]]));
      expect(found.total, value).toBe(count);
      expect(count).toBeGreaterThan(0);
    }
  });

  it('filters the search (values OR-ed) and counts each command without its own selection', async () => {
    const index = await demoIndex();
    const printing = await searchResources(
      index,
      olivia,
      queryOf(search, [
        [FIELD, 'print-test-page'],
        ['pageSize', '100'],
      ]),
    );
    expect(printing.total).toBeGreaterThan(0);
    for (const device of printing.resources) {
      expect(
        device.type === 'DEVICE' &&
          device.health?.hubs.some((hub) => hub.devices.some((sub) => sub.commands.some((c) => c.command === 'print-test-page'))),
      ).toBe(true);
    }
    const either = await searchResources(
      index,
      olivia,
      queryOf(search, [
        [FIELD, 'print-test-page'],
        [FIELD, 'open-locker'],
      ]),
    );
    expect(either.total).toBeGreaterThanOrEqual(printing.total);

    const all = await commandDescriptor(index, [['type', 'DEVICE']]);
    const selected = await commandDescriptor(index, [
      ['type', 'DEVICE'],
      [FIELD, 'print-test-page'],
    ]);
    expect(selected?.definition.parameters).toEqual(all?.definition.parameters);
    const narrowed = await commandDescriptor(index, [
      ['type', 'DEVICE'],
      ['connection.state', 'CONNECTED'],
    ]);
    const countOf = (descriptor: typeof all, value: string) => descriptor?.definition.parameters.find((p) => p.value === value)?.count ?? 0;
    expect(countOf(narrowed, 'print-test-page')).toBeLessThan(countOf(all, 'print-test-page'));
  });

  it('takes any non-empty value up to the parameter length, and refuses an empty one', () => {
    expect(queryOf(search, [[FIELD, 'PRINT_TEST_PAGE']]).filters.get(FIELD)).toEqual(['PRINT_TEST_PAGE']);
    expect(() => queryOf(search, [[FIELD, '']])).toThrow(BadRequestError);
    expect(() => queryOf(searchFilters, [[FIELD, 'x'.repeat(257)]])).toThrow(BadRequestError);
  });
});
