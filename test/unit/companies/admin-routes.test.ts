/**
 * The companies administration routes' definitions: what their schemas accept and refuse (400 before the use case),
 * how the paths match, that they are not company-scoped, and that the document declares every status they answer.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/contract/openapi.js';
import type { RouteDefinition } from '../../../functions/contract/route.js';
import { adminCompaniesList, adminCompanyCreate, adminCompanyGet, adminCompanyUpdate } from '../../../functions/contract/routes/admin.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import { MAX_QUOTA_BYTES } from '../../../functions/core/companies/admin.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { routeInput } from '../../../functions/platform/http.js';

const ADMIN_ROUTES = [adminCompanyCreate, adminCompaniesList, adminCompanyGet, adminCompanyUpdate];

/** The paths of the violations routeInput throws for this request, or 'accepted'. */
function refused(route: RouteDefinition, request: { body?: unknown; companyId?: string; query?: string }): string[] | 'accepted' {
  const event = {
    rawQueryString: request.query ?? '',
    pathParameters: request.companyId === undefined ? {} : { companyId: request.companyId },
    headers: request.body === undefined ? {} : { 'content-type': 'application/json' },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  } as unknown as APIGatewayProxyEventV2;
  try {
    routeInput(route, event);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    return error.violations.map((violation) => violation.path);
  }
}

describe('companies administration routes', () => {
  it('are on the main address, not company-scoped, each behind a companies scope', () => {
    expect(ADMIN_ROUTES.map((route) => [route.method, route.path, route.scope, 'companyParameter' in route])).toEqual([
      ['POST', '/admin/companies', 'companies:write', false],
      ['GET', '/admin/companies', 'companies:read', false],
      ['GET', '/admin/companies/{companyId}', 'companies:read', false],
      ['PATCH', '/admin/companies/{companyId}', 'companies:write', false],
    ]);
    for (const route of ADMIN_ROUTES) expect(ROUTES).toContain(route);
    expect(matchRoute(ROUTES, 'main', 'PATCH', '/admin/companies/initech')).toMatchObject({ route: { id: 'AdminCompanyUpdate' } });
    expect(matchRoute(ROUTES, 'main', 'DELETE', '/admin/companies/initech')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['GET', 'PATCH'],
    });
  });

  it('share one function, which may touch the companies table, read the devices table, write the audit table, list the users, read the caller and sign cursors', () => {
    for (const route of ADMIN_ROUTES) {
      expect(route.entry).toBe('functions/handlers/admin-companies.ts');
      expect(route.access).toEqual({
        storage: true,
        pagesListings: true,
        tables: { companies: 'RW', devices: 'R', audit: 'W' },
        userPool: ['ListUsers', 'AdminGetUser'],
      });
    }
  });

  it('accept a valid new company and refuse an id out of pattern, a bad name or quota, an unknown member', () => {
    expect(refused(adminCompanyCreate, { body: { id: 'initech', name: 'Initech', quotaBytes: 10_485_760 } })).toBe('accepted');
    expect(refused(adminCompanyCreate, { body: { id: 'a.b_c-9', name: 'x'.repeat(100), quotaBytes: MAX_QUOTA_BYTES } })).toBe('accepted');
    for (const id of ['', '-initech', 'in itech', 'init#ech', 'a/b', 'x'.repeat(129), 'ÉCOLE', 'a,b', 'ACME', 'Initech']) {
      expect(refused(adminCompanyCreate, { body: { id, name: 'N', quotaBytes: 0 } }), id).toEqual(['/id']);
    }
    expect(refused(adminCompanyCreate, { body: { id: 'a', name: '', quotaBytes: 0 } })).toEqual(['/name']);
    expect(refused(adminCompanyCreate, { body: { id: 'a', name: '   ', quotaBytes: 0 } })).toEqual(['/name']);
    expect(refused(adminCompanyCreate, { body: { id: 'a', name: 'x'.repeat(101), quotaBytes: 0 } })).toEqual(['/name']);
    for (const quotaBytes of [-1, 1.5, MAX_QUOTA_BYTES + 1, '10']) {
      expect(refused(adminCompanyCreate, { body: { id: 'a', name: 'N', quotaBytes } }), String(quotaBytes)).toEqual(['/quotaBytes']);
    }
    expect(refused(adminCompanyCreate, { body: { id: 'a', name: 'N', quotaBytes: 0, usedBytes: 0 } })).toEqual(['/usedBytes']);
    expect(refused(adminCompanyCreate, { body: { name: 'N', quotaBytes: 0 } })).toEqual(['/id']);
  });

  it('refuse a company id out of pattern in the path, where an id of any case created before the lower-case rule is named', () => {
    expect(refused(adminCompanyGet, { companyId: 'initech' })).toBe('accepted');
    expect(refused(adminCompanyGet, { companyId: 'Initech' })).toBe('accepted');
    expect(refused(adminCompanyGet, { companyId: 'bad id' })).toEqual(['companyId']);
    expect(refused(adminCompanyUpdate, { companyId: '#acme', body: { name: 'N' } })).toEqual(['companyId']);
  });

  it('take a change of name, quota or both, and refuse an empty or unknown change', () => {
    const update = (body: unknown) => refused(adminCompanyUpdate, { companyId: 'initech', body });
    expect(update({ name: 'Initech Corp' })).toBe('accepted');
    expect(update({ quotaBytes: 0 })).toBe('accepted');
    expect(update({ name: 'Initech', quotaBytes: 1 })).toBe('accepted');
    expect(update({})).toEqual(['/']);
    expect(update({ usedBytes: 0 })).toEqual(['/usedBytes', '/']);
    expect(update({ quotaBytes: -5 })).toEqual(['/quotaBytes']);
  });

  it('page with limit and cursor only', () => {
    expect(refused(adminCompaniesList, { query: 'limit=10' })).toBe('accepted');
    expect(refused(adminCompaniesList, { query: 'limit=0' })).toEqual(['limit']);
    expect(refused(adminCompaniesList, { query: 'company=acme' })).toEqual(['company']);
  });

  it('are documented with every status they answer, under Administration', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, { tags: string[]; responses: Record<string, unknown> }>>;
    const statuses = (path: string, method: string) => Object.keys(paths[path]?.[method]?.responses ?? {}).sort();
    expect(statuses('/admin/companies', 'post')).toEqual(['201', '400', '401', '403', '409', '415', '431', '500', '503']);
    expect(statuses('/admin/companies', 'get')).toEqual(['200', '400', '401', '403', '431', '500', '503']);
    expect(statuses('/admin/companies/{companyId}', 'get')).toEqual(['200', '400', '401', '403', '404', '431', '500', '503']);
    expect(statuses('/admin/companies/{companyId}', 'patch')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '415',
      '431',
      '500',
      '503',
    ]);
    expect(paths['/admin/companies/{companyId}']?.patch?.tags).toEqual(['Administration']);
  });
});
