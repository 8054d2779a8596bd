/**
 * End-to-end failure paths of search and filters over real HTTP against one local service (`bin/local.ts`): parameter
 * validation (400) and routing (404/405).
 *
 * Requests the typed client can express go through it (clientFor); the others are hand-built with `call` on purpose:
 * missing, forged or foreign-scheme tokens, bodies that are not JSON or not of the documented shape, parameters the
 * document does not have or values of the wrong type, routes sent to the wrong address or with the wrong method.
 * Every error must be an RFC 9457 problem (docs/contract.md, "Errors").
 */
import { describe, expect, it } from 'vitest';
import { deploymentHelpers, expectProblem, expectViolation } from './failure-paths.js';
import { call, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice'] });

const { as } = deploymentHelpers(() => local.service);

// ---------------------------------------------------------------------------------------------------------------
// Search / filters parameter validation, routing
// ---------------------------------------------------------------------------------------------------------------

describe('search and filters: 400 for bad parameters; routing 404/405', () => {
  // Hand-built: the query strings as sent, most of them outside what the document allows.
  const search = (query: string) => call(`${local.service.api}/resources/search?${query}`, { token: local.tokens.alice });

  it('unknown parameter is named in errors[].path with the allowed ones', async () => {
    const problem = expectProblem(await search('colour=red'), 400, /colour/);
    expectViolation(problem, 'colour', /Allowed: .*connection\.state/);
  });

  it.each([
    ['pageSize=101', 'pageSize', /1 to 100/],
    ['pageSize=0', 'pageSize', /1 to 100/],
    ['page=0', 'page', /integer from 1/],
    ['page=-1', 'page', /integer from 1/],
    ['sort=colour', 'sort', /Allowed: serial/],
    ['direction=UP', 'direction', /ASC or DESC/],
    ['connection.state=SLEEPING', 'connection.state', /Allowed: UNKNOWN, CONNECTED, DISCONNECTED/],
    ['page=1000&pageSize=100', 'page', /10000/],
    ['page=1&page=2', 'page', /only once/],
  ])('%s → 400 naming %s', async (query, path, message) => {
    const problem = expectProblem(await search(query), 400, new RegExp(path.replace('.', '\\.')));
    expectViolation(problem, path, message);
  });

  it('several bad parameters are all listed', async () => {
    const problem = expectProblem(await search('colour=red&pageSize=500&direction=UP&sort=colour'), 400, /4 invalid parameter/);
    expect((problem.errors ?? []).map((error) => error.path).sort()).toEqual(['colour', 'direction', 'pageSize', 'sort']);
  });

  it('filters: type=GROUP and paging parameters → 400', async () => {
    const problem = expectProblem(
      await call(`${local.service.api}/resources/search/filters?type=GROUP`, { token: local.tokens.alice }),
      400,
    );
    expectViolation(problem, 'type', /DEVICE, SCENARIO/);
    expectViolation(
      expectProblem(await call(`${local.service.api}/resources/search/filters?pageSize=10`, { token: local.tokens.alice }), 400),
      'pageSize',
    );
    expectViolation(
      expectProblem(await call(`${local.service.api}/resources/search/filters?colour=red`, { token: local.tokens.alice }), 400),
      'colour',
    );
    // Control.
    expect(
      (await as(local.tokens.alice).main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE' } } })).response.status,
    ).toBe(200);
  });

  it('unknown route → 404 problem, wrong method → 405 problem, route of another address → 404 naming it', async () => {
    expectProblem(await call(`${local.service.api}/no/such/route`, { token: local.tokens.alice }), 404, /No route/);
    expectProblem(await call(`${local.service.api}/companies/acme/resources`, { token: local.tokens.alice }), 404, /No route/);
    // A route of another address: 404 naming it.
    expectProblem(await call(`${local.service.upload}/resources/search`, { token: local.tokens.alice }), 404, /served by the main address/);
    expectProblem(await call(`${local.service.auth}/nope`), 404, /No route/);
    expectProblem(await call(`${local.service.api}/resources/search`, { method: 'DELETE', token: local.tokens.alice }), 405, /DELETE/);
    expectProblem(
      await call(`${local.service.api}/companies/acme/resources/deployments`, { method: 'GET', token: local.tokens.alice }),
      405,
      /GET/,
    );
    expectProblem(
      await call(`${local.service.upload}/companies/acme/resources/scenarios/uploads/x`, {
        method: 'POST',
        token: local.tokens.alice,
        body: 'x',
      }),
      405,
      /POST/,
    );
    expectProblem(
      await call(`${local.service.upload}/companies/acme/resources/scenarios`, { method: 'GET', token: local.tokens.alice }),
      404,
      /served by the main address/,
    );
    expectProblem(await call(`${local.service.auth}/token`, { method: 'GET' }), 405, /GET/);
  });
});
