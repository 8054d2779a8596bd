/**
 * The users administration routes' definitions: what their schemas accept and refuse (400 before the use case), how
 * the paths match, the one function's access, and that the document declares every status they answer.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/contract/openapi.js';
import type { RouteDefinition } from '../../../functions/contract/route.js';
import {
  adminUserCreate,
  adminUserDelete,
  adminUserGet,
  adminUserResetPassword,
  adminUsersList,
  adminUserUpdate,
} from '../../../functions/contract/routes/admin-users.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { routeInput } from '../../../functions/platform/http.js';

const USER_ROUTES = [adminUserCreate, adminUsersList, adminUserGet, adminUserUpdate, adminUserDelete, adminUserResetPassword];

/** The violations routeInput throws for this request (path: message), or 'accepted'. */
function refused(route: RouteDefinition, request: { body?: unknown; username?: string; query?: string }): string[] | 'accepted' {
  const event = {
    rawQueryString: request.query ?? '',
    pathParameters: request.username === undefined ? {} : { username: encodeURIComponent(request.username) },
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

const invitation = { username: 'frank', email: 'frank@example.com', role: 'operator', companies: ['acme'] };

describe('users administration routes', () => {
  it('are on the main address, not company-scoped, behind users:read or users:write', () => {
    expect(USER_ROUTES.map((route) => [route.method, route.path, route.scope, 'companyParameter' in route])).toEqual([
      ['POST', '/admin/users', 'users:write', false],
      ['GET', '/admin/users', 'users:read', false],
      ['GET', '/admin/users/{username}', 'users:read', false],
      ['PATCH', '/admin/users/{username}', 'users:write', false],
      ['DELETE', '/admin/users/{username}', 'users:write', false],
      ['POST', '/admin/users/{username}/reset-password', 'users:write', false],
    ]);
    for (const route of USER_ROUTES) expect(ROUTES).toContain(route);
    expect(matchRoute(ROUTES, 'main', 'POST', '/admin/users/a.b%40c.com/reset-password')).toMatchObject({
      route: { id: 'AdminUserResetPassword' },
    });
    expect(matchRoute(ROUTES, 'main', 'PUT', '/admin/users/alice')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['DELETE', 'GET', 'PATCH'],
    });
  });

  it('share one function, granted the Cognito administration actions it calls, reads of companies, writes of audit entries and the cursor key', () => {
    for (const route of USER_ROUTES) {
      expect(route.entry).toBe('functions/handlers/admin-users.ts');
      expect(route.access).toEqual({
        storage: true,
        pagesListings: true,
        tables: { companies: 'R', audit: 'W' },
        userPool: [
          'AdminCreateUser',
          'AdminGetUser',
          'ListUsers',
          'AdminUpdateUserAttributes',
          'AdminDisableUser',
          'AdminEnableUser',
          'AdminDeleteUser',
          'AdminSetUserPassword',
          'AdminUserGlobalSignOut',
        ],
      });
    }
  });

  it('accept a valid invitation and refuse a username out of pattern, a bad email, an unknown role or bad companies', () => {
    expect(refused(adminUserCreate, { body: invitation })).toBe('accepted');
    expect(refused(adminUserCreate, { body: { ...invitation, username: 'a.b_c-d@e', role: 'platform-admin', companies: [] } })).toBe(
      'accepted',
    );
    expect(refused(adminUserCreate, { body: { ...invitation, username: 'x'.repeat(128) } })).toBe('accepted');
    for (const username of ['', '-frank', '.frank', 'fr ank', 'fr/ank', 'frank#1', 'x'.repeat(129), 'frånk', 'a,b']) {
      expect(refused(adminUserCreate, { body: { ...invitation, username } }), username).toEqual(['/username']);
    }
    for (const email of ['frank', 'frank@', '@example.com', `${'x'.repeat(250)}@example.com`, 42]) {
      expect(refused(adminUserCreate, { body: { ...invitation, email } }), String(email)).toEqual(['/email']);
    }
    for (const role of ['admin', 'root', 'Operator', '', null]) {
      expect(refused(adminUserCreate, { body: { ...invitation, role } }), String(role)).toEqual(['/role']);
    }
    expect(refused(adminUserCreate, { body: { ...invitation, companies: ['acme', 'acme'] } })).toEqual(['/companies']);
    expect(refused(adminUserCreate, { body: { ...invitation, companies: ['bad id'] } })).toEqual(['/companies/0']);
    expect(refused(adminUserCreate, { body: { ...invitation, companies: Array.from({ length: 51 }, (_, i) => `c${i}`) } })).toEqual([
      '/companies',
    ]);
    // 50 ids of 40 characters do not fit in Cognito's 2,048-character custom:companies; 50 of 39 do.
    const ids = (length: number) => Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')}${'c'.repeat(length - 2)}`);
    expect(refused(adminUserCreate, { body: { ...invitation, companies: ids(39) } })).toBe('accepted');
    expect(refused(adminUserCreate, { body: { ...invitation, companies: ids(40) } })).toEqual(['/companies']);
    expect(refused(adminUserCreate, { body: { ...invitation, password: 'Secret1!' } })).toEqual(['/password']);
    expect(refused(adminUserCreate, { body: { username: 'frank' } })).toEqual(['/email', '/role', '/companies']);
  });

  it('name the roles when the role is unknown', () => {
    const event = {
      rawQueryString: '',
      pathParameters: {},
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...invitation, role: 'admin' }),
    } as unknown as APIGatewayProxyEventV2;
    expect(() => routeInput(adminUserCreate, event)).toThrow(BadRequestError);
    try {
      routeInput(adminUserCreate, event);
    } catch (error) {
      expect((error as BadRequestError).violations[0]?.message).toBe(
        'The role must be one of viewer, operator, company-admin, platform-admin.',
      );
    }
  });

  it('take a change of role, companies or enabled, and refuse an empty or unknown change', () => {
    const update = (body: unknown) => refused(adminUserUpdate, { username: 'alice', body });
    expect(update({ role: 'company-admin' })).toBe('accepted');
    expect(update({ companies: ['acme', 'globex'] })).toBe('accepted');
    expect(update({ enabled: false })).toBe('accepted');
    expect(update({ role: 'viewer', companies: [], enabled: true })).toBe('accepted');
    expect(update({})).toEqual(['/']);
    expect(update({ enabled: 'no' })).toEqual(['/enabled']);
    expect(update({ email: 'a@example.com' })).toEqual(['/email', '/']);
    expect(refused(adminUserUpdate, { username: 'bad name', body: { enabled: true } })).toEqual(['username']);
  });

  it('refuse a username out of pattern in the path, and page by company, limit and cursor', () => {
    expect(refused(adminUserGet, { username: 'a.b@c.com' })).toBe('accepted');
    expect(refused(adminUserGet, { username: '-x' })).toEqual(['username']);
    expect(refused(adminUserDelete, { username: 'x'.repeat(129) })).toEqual(['username']);
    expect(refused(adminUserResetPassword, { username: 'a b' })).toEqual(['username']);
    expect(refused(adminUsersList, { query: 'company=acme&limit=10' })).toBe('accepted');
    expect(refused(adminUsersList, { query: '' })).toBe('accepted');
    expect(refused(adminUsersList, { query: 'company=bad%20id' })).toEqual(['company']);
    expect(refused(adminUsersList, { query: 'company=acme&company=globex' })).toEqual(['company']);
    expect(refused(adminUsersList, { query: 'role=viewer' })).toEqual(['role']);
  });

  it('are documented with every status they answer, under Administration', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, { tags: string[]; responses: Record<string, unknown> }>>;
    const statuses = (path: string, method: string) => Object.keys(paths[path]?.[method]?.responses ?? {}).sort();
    const common = ['400', '401', '403', '431', '500', '503'];
    expect(statuses('/admin/users', 'post')).toEqual(['201', ...common, '409', '415'].sort());
    expect(statuses('/admin/users', 'get')).toEqual(['200', ...common].sort());
    expect(statuses('/admin/users/{username}', 'get')).toEqual(['200', ...common, '404'].sort());
    expect(statuses('/admin/users/{username}', 'patch')).toEqual(['200', ...common, '404', '409', '415'].sort());
    expect(statuses('/admin/users/{username}', 'delete')).toEqual(['204', ...common, '404', '409'].sort());
    expect(statuses('/admin/users/{username}/reset-password', 'post')).toEqual(['200', ...common, '404', '409'].sort());
    expect(paths['/admin/users/{username}']?.patch?.tags).toEqual(['Administration']);
  });
});
