import { describe, expect, it } from 'vitest';
import { expectDocumented } from '../../e2e/contract.js';

const USAGE = { quotaBytes: 5_242_880, usedBytes: 1_024, availableBytes: 5_241_856 };

function json(status: number, body: unknown, headers: Record<string, string> = {}, contentType = 'application/json'): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': contentType, ...headers } });
}

const NOT_FOUND = {
  type: 'https://device-scenario-service.dev/problems/not-found',
  title: 'Not Found',
  status: 404,
  detail: "Company 'nope' does not exist.",
  instance: '/companies/nope/resources/scenarios/usage',
};

describe('expectDocumented', () => {
  it('accepts a documented response and returns its body, leaving the response readable', async () => {
    const response = json(200, USAGE);
    await expect(expectDocumented('ScenarioUsage', response)).resolves.toEqual(USAGE);
    expect(await response.json()).toEqual(USAGE);
  });

  it('finds the operation from the method, the concrete path and the address', async () => {
    await expect(
      expectDocumented({ method: 'GET', path: '/companies/acme/resources/scenarios/usage', api: 'main' }, json(200, USAGE)),
    ).resolves.toEqual(USAGE);
    await expect(
      expectDocumented({ method: 'GET', path: '/companies/acme/resources/scenarios/usage', api: 'upload' }, json(200, USAGE)),
    ).rejects.toThrow(/No route/);
  });

  it('accepts a documented problem, and the e2e harness results', async () => {
    await expectDocumented('ScenarioUsage', json(404, NOT_FOUND, {}, 'application/problem+json'));
    await expectDocumented('ScenarioUsage', { status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: USAGE });
  });

  it('refuses an undocumented status', async () => {
    await expect(expectDocumented('ScenarioUsage', json(409, NOT_FOUND, {}, 'application/problem+json'))).rejects.toThrow(/does not list/);
  });

  it('refuses a body missing a required field, or with a field the document does not list', async () => {
    const { availableBytes: _available, ...missing } = USAGE;
    await expect(expectDocumented('ScenarioUsage', json(200, missing))).rejects.toThrow(/availableBytes/);
    await expect(expectDocumented('ScenarioUsage', json(200, { ...USAGE, spareBytes: 1 }))).rejects.toThrow(/additional/);
    await expect(
      expectDocumented('ScenarioUsage', json(404, { ...NOT_FOUND, status: 410 }, {}, 'application/problem+json')),
    ).rejects.toThrow(/status/);
  });

  it('refuses another content type than the documented one', async () => {
    await expect(expectDocumented('ScenarioUsage', json(404, NOT_FOUND))).rejects.toThrow(/content type/);
  });

  it('refuses a response without a header the document requires, or with an invalid one', async () => {
    const unauthorized = {
      type: 'https://device-scenario-service.dev/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: 'No token.',
    };
    await expect(expectDocumented('ScenarioUsage', json(401, unauthorized, {}, 'application/problem+json'))).rejects.toThrow(
      /WWW-Authenticate/,
    );
    await expectDocumented('ScenarioUsage', json(401, unauthorized, { 'www-authenticate': 'Bearer' }, 'application/problem+json'));
    const unavailable = {
      type: 'https://device-scenario-service.dev/problems/service-unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: 'Down.',
    };
    await expectDocumented('ScenarioUsage', json(503, unavailable, { 'retry-after': '5' }, 'application/problem+json'));
    await expect(
      expectDocumented('ScenarioUsage', json(503, unavailable, { 'retry-after': 'soon' }, 'application/problem+json')),
    ).rejects.toThrow(/Retry-After/);
  });
});
