import { describe, expect, it } from 'vitest';
import { search } from '../../../functions/contract/routes/search.js';
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  MAX_RESULT_WINDOW,
  type SearchQuery,
  searchQueryOf,
} from '../../../functions/core/search/query.js';
import { BadRequestError, ForbiddenError, type ProblemViolation } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { statusOf } from '../../../functions/platform/problem.js';
import { queryOf } from '../../support/route-input.js';

/** The search route's validation of a query string, then the search it runs for the caller. */
function parseSearchQuery(parameters: [string, string][], principal: Principal): SearchQuery {
  return searchQueryOf(queryOf(search, parameters), principal);
}

const olivia: Principal = { subject: 'olivia', companies: ['acme', 'globex'], scopes: new Set(['search:read']) };

type Pairs = [string, string][];

/** Runs the parser and returns the BadRequestError's violations; fails the test when no 400 is thrown. */
function violations(parameters: Pairs, principal: Principal = olivia): ProblemViolation[] {
  try {
    parseSearchQuery(parameters, principal);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    const problem = error as BadRequestError;
    expect(statusOf(problem)).toBe(400);
    return problem.violations;
  }
  throw new Error(`expected a 400 for ${JSON.stringify(parameters)}`);
}

function paths(parameters: Pairs): string[] {
  return violations(parameters).map((violation) => violation.path);
}

describe('parseSearchQuery defaults', () => {
  it('uses page 1, pageSize 20, sort serial ASC and every company of the caller when nothing is given', () => {
    const query = parseSearchQuery([], olivia);
    expect(query.page).toBe(1);
    expect(query.pageSize).toBe(DEFAULT_PAGE_SIZE);
    expect(DEFAULT_PAGE_SIZE).toBe(20);
    expect(query.sort).toEqual({ field: 'serial', direction: 'ASC' });
    expect(query.companies).toEqual(['acme', 'globex']);
    expect(query.filters.size).toBe(0);
    expect(query.global).toBeUndefined();
  });

  it('does not hand out the principal companies array itself (mutating the query leaves the token untouched)', () => {
    const query = parseSearchQuery([], olivia);
    query.companies.push('intruder');
    expect(olivia.companies).toEqual(['acme', 'globex']);
  });

  it('accepts explicit paging and sorting values', () => {
    const query = parseSearchQuery(
      [
        ['page', '3'],
        ['pageSize', String(MAX_PAGE_SIZE)],
        ['sort', 'updated'],
        ['direction', 'DESC'],
      ],
      olivia,
    );
    expect(query).toMatchObject({ page: 3, pageSize: 100, sort: { field: 'updated', direction: 'DESC' } });
  });

  it('keeps the default direction ASC when only sort is given', () => {
    expect(parseSearchQuery([['sort', 'connection.state']], olivia).sort).toEqual({ field: 'connection.state', direction: 'ASC' });
  });
});

describe('parseSearchQuery filters', () => {
  it('OR-s repeats of one field into one deduplicated list, in order of first appearance', () => {
    const query = parseSearchQuery(
      [
        ['connection.state', 'CONNECTED'],
        ['connection.state', 'UNKNOWN'],
        ['connection.state', 'CONNECTED'],
      ],
      olivia,
    );
    expect(query.filters.get('connection.state')).toEqual(['CONNECTED', 'UNKNOWN']);
    expect(query.filters.size).toBe(1);
  });

  it('keeps several fields side by side', () => {
    const query = parseSearchQuery(
      [
        ['connection.state', 'DISCONNECTED'],
        ['health.mode', 'SERVER'],
        ['health.versionCode', '4.2.0'],
        ['type', 'DEVICE'],
        ['health.mode', 'EMBEDDED_PLATFORM_ANDROID'],
      ],
      olivia,
    );
    expect(Object.fromEntries(query.filters)).toEqual({
      'connection.state': ['DISCONNECTED'],
      'health.mode': ['SERVER', 'EMBEDDED_PLATFORM_ANDROID'],
      'health.versionCode': ['4.2.0'],
      type: ['DEVICE'],
    });
  });

  it('accepts any value of a data-driven field (version codes are not a fixed list)', () => {
    const query = parseSearchQuery([['health.versionCode', 'anything-at-all']], olivia);
    expect(query.filters.get('health.versionCode')).toEqual(['anything-at-all']);
  });
});

describe('parseSearchQuery global', () => {
  it('empties filters and orders by relevance DESC without sort', () => {
    const query = parseSearchQuery(
      [
        ['connection.state', 'CONNECTED'],
        ['global', 'lobby'],
      ],
      olivia,
    );
    expect(query.global).toBe('lobby');
    expect(query.filters.size).toBe(0);
    expect(query.sort).toEqual({ field: 'relevance', direction: 'DESC' });
  });

  it('trims the full-text query', () => {
    expect(parseSearchQuery([['global', '  lobby kiosk  ']], olivia).global).toBe('lobby kiosk');
  });

  it('keeps relevance DESC even when direction=ASC is given without sort (documented: relevance is always DESC)', () => {
    expect(
      parseSearchQuery(
        [
          ['global', 'lobby'],
          ['direction', 'ASC'],
        ],
        olivia,
      ).sort,
    ).toEqual({ field: 'relevance', direction: 'DESC' });
  });

  it('uses an explicit sort (default ASC) instead of relevance', () => {
    expect(
      parseSearchQuery(
        [
          ['global', 'lobby'],
          ['sort', 'serial'],
        ],
        olivia,
      ).sort,
    ).toEqual({ field: 'serial', direction: 'ASC' });
    expect(
      parseSearchQuery(
        [
          ['global', 'lobby'],
          ['sort', 'name'],
          ['direction', 'DESC'],
        ],
        olivia,
      ).sort,
    ).toEqual({
      field: 'name',
      direction: 'DESC',
    });
  });

  it('ignores the company filter too (every filter parameter is ignored), so the search covers all companies', () => {
    const query = parseSearchQuery(
      [
        ['company', 'acme'],
        ['global', 'lobby'],
      ],
      olivia,
    );
    expect(query.companies).toEqual(['acme', 'globex']);
  });

  it('ignores a blank global: filter mode and serial ASC stay', () => {
    for (const blank of ['', '   ']) {
      const query = parseSearchQuery(
        [
          ['global', blank],
          ['health.mode', 'SERVER'],
        ],
        olivia,
      );
      expect(query.global).toBeUndefined();
      expect('global' in query).toBe(false);
      expect(query.filters.get('health.mode')).toEqual(['SERVER']);
      expect(query.sort).toEqual({ field: 'serial', direction: 'ASC' });
    }
  });
});

describe('parseSearchQuery company scope', () => {
  it('narrows the companies to the requested ones (deduplicated)', () => {
    expect(
      parseSearchQuery(
        [
          ['company', 'globex'],
          ['company', 'globex'],
        ],
        olivia,
      ).companies,
    ).toEqual(['globex']);
    expect(
      parseSearchQuery(
        [
          ['company', 'globex'],
          ['company', 'acme'],
        ],
        olivia,
      ).companies,
    ).toEqual(['globex', 'acme']);
  });

  it('does not treat company as an ordinary filter', () => {
    expect(parseSearchQuery([['company', 'acme']], olivia).filters.has('company')).toBe(false);
  });

  it('refuses a company outside the token with 403', () => {
    const attempt = () =>
      parseSearchQuery(
        [
          ['company', 'acme'],
          ['company', 'initech'],
        ],
        olivia,
      );
    expect(attempt).toThrow(ForbiddenError);
    try {
      attempt();
    } catch (error) {
      expect(statusOf(error as ForbiddenError)).toBe(403);
      expect((error as ForbiddenError).message).toContain('initech');
    }
  });

  it('refuses a foreign company with 403 even in global mode', () => {
    expect(() =>
      parseSearchQuery(
        [
          ['company', 'initech'],
          ['global', 'x'],
        ],
        olivia,
      ),
    ).toThrow(ForbiddenError);
  });

  it('reports 400 rather than 403 when the request is also malformed', () => {
    expect(() =>
      parseSearchQuery(
        [
          ['company', 'initech'],
          ['page', '0'],
        ],
        olivia,
      ),
    ).toThrow(BadRequestError);
  });
});

describe('parseSearchQuery 400 cases', () => {
  it('reports a bad page or pageSize once, for itself, without also blaming the result window', () => {
    expect(
      violations([
        ['pageSize', '101'],
        ['page', '200'],
      ]).map((violation) => violation.path),
    ).toEqual(['pageSize']);
    expect(violations([['page', '10001']]).map((violation) => violation.path)).toEqual(['page']);
  });

  it('names an unknown parameter and lists the allowed ones', () => {
    const [violation] = violations([['colour', 'blue']]);
    expect(violation?.path).toBe('colour');
    expect(violation?.message).toContain('pageSize');
    expect(violation?.message).toContain('connection.state');
  });

  it('rejects values outside a fixed enumeration and lists the allowed values', () => {
    const found = violations([
      ['connection.state', 'ONLINE'],
      ['type', 'PRINTER'],
      ['health.mode', 'server'],
    ]);
    expect(found.map((v) => v.path)).toEqual(['connection.state', 'type', 'health.mode']);
    expect(found[0]?.message).toContain('CONNECTED');
    expect(found[0]?.message).toContain('DISCONNECTED');
  });

  it('rejects empty filter values', () => {
    expect(paths([['health.versionCode', '']])).toEqual(['health.versionCode']);
    expect(paths([['company', '']])).toEqual(['company']);
    expect(paths([['connection.state', '']])).toEqual(['connection.state']);
  });

  it.each([
    ['page', '0'],
    ['page', '-1'],
    ['page', '1.5'],
    ['page', 'two'],
    ['page', ''],
    ['page', '1e2'],
    ['pageSize', '0'],
    ['pageSize', String(MAX_PAGE_SIZE + 1)],
    ['pageSize', '2.0'],
    ['pageSize', 'abc'],
  ])('rejects %s=%j', (name, value) => {
    expect(paths([[name, value]])).toEqual([name]);
  });

  it('accepts the bounds themselves', () => {
    expect(parseSearchQuery([['pageSize', '1']], olivia).pageSize).toBe(1);
    expect(parseSearchQuery([['pageSize', '100']], olivia).pageSize).toBe(100);
  });

  it('rejects an unknown sort field and a direction other than ASC/DESC (case-sensitive)', () => {
    const found = violations([
      ['sort', 'colour'],
      ['direction', 'asc'],
    ]);
    expect(found.map((v) => v.path)).toEqual(['sort', 'direction']);
    expect(found[0]?.message).toContain('serial');
    expect(found[1]?.message).toContain('ASC');
  });

  it('rejects sort=relevance (it is reported, not requested)', () => {
    expect(
      paths([
        ['sort', 'relevance'],
        ['global', 'x'],
      ]),
    ).toEqual(['sort']);
  });

  it('rejects a repeated page, pageSize or global', () => {
    expect(
      paths([
        ['page', '1'],
        ['page', '2'],
      ]),
    ).toEqual(['page']);
    expect(
      paths([
        ['pageSize', '10'],
        ['pageSize', '10'],
      ]),
    ).toEqual(['pageSize']);
    expect(
      paths([
        ['global', 'a'],
        ['global', 'b'],
      ]),
    ).toEqual(['global']);
  });

  it('refuses paging beyond MAX_RESULT_WINDOW and accepts the last reachable page', () => {
    const lastPage = MAX_RESULT_WINDOW / DEFAULT_PAGE_SIZE;
    expect(parseSearchQuery([['page', String(lastPage)]], olivia).page).toBe(lastPage);
    expect(paths([['page', String(lastPage + 1)]])).toEqual(['page']);
    expect(
      paths([
        ['page', '101'],
        ['pageSize', '100'],
      ]),
    ).toEqual(['page']);
  });

  it('collects every violation into one BadRequestError', () => {
    const found = violations([
      ['colour', 'blue'],
      ['connection.state', 'ONLINE'],
      ['page', '0'],
      ['pageSize', '500'],
      ['sort', 'nope'],
      ['direction', 'UP'],
      ['health.mode', 'SERVER'],
    ]);
    expect(found.map((v) => v.path).sort()).toEqual(['colour', 'connection.state', 'direction', 'page', 'pageSize', 'sort']);
    for (const violation of found) expect(violation.message.length).toBeGreaterThan(0);
  });

  it('names the invalid parameters in the detail', () => {
    try {
      parseSearchQuery(
        [
          ['colour', 'x'],
          ['page', 'x'],
        ],
        olivia,
      );
      expect.unreachable('expected a 400');
    } catch (error) {
      expect((error as BadRequestError).message).toContain('colour');
      expect((error as BadRequestError).message).toContain('page');
    }
  });
});
