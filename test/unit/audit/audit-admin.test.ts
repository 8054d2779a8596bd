/**
 * Reading the audit log (functions/core/audit/admin.ts and `GET /admin/audit`'s definition): who may list what, and
 * what the route's query accepts.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { adminAuditList } from '../../../functions/contract/routes/admin-audit.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import { ROLES } from '../../../functions/core/access/roles.js';
import { listAudit } from '../../../functions/core/audit/admin.js';
import type { AuditEntry, AuditFilter, AuditLog } from '../../../functions/core/audit/ports.js';
import { BadRequestError, ForbiddenError } from '../../../functions/core/shared/errors.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { routeInput } from '../../../functions/platform/http.js';
import { callersDirectory } from '../../support/administrators.js';

const root: Principal = { subject: 'root', companies: [], scopes: new Set(ROLES['platform-admin']) };
const admin: Principal = { subject: 'carol', companies: ['initech', 'globex'], scopes: new Set(ROLES['company-admin']) };
const operator: Principal = { subject: 'alice', companies: ['initech'], scopes: new Set(ROLES.operator) };
/** The callers as they are now; a test demoting or disabling one restores them. */
const users = callersDirectory({
  root: { role: 'platform-admin' },
  carol: { role: 'company-admin', companies: ['initech', 'globex'] },
  alice: { role: 'operator', companies: ['initech'] },
});

/** An audit log that answers every listing with an empty page and remembers the filters it was asked. */
function recordingLog(items: AuditEntry[] = []): AuditLog & { asked: AuditFilter[] } {
  const asked: AuditFilter[] = [];
  return {
    asked,
    async record() {},
    async list(filter) {
      asked.push(filter);
      return { items, nextCursor: null };
    },
  };
}

/** An entry of a change to user `id`, whose views before and after are `views`. */
function userEntry(id: string, ...views: { role: string; companies: string[] }[]): AuditEntry {
  const [before, after] = views.length === 1 ? [undefined, views[0]] : views;
  return {
    id: `01J${id.toUpperCase().padEnd(23, '0')}`,
    at: '2026-11-27T12:00:00.000Z',
    actor: 'root',
    action: before === undefined ? 'user.invited' : 'user.updated',
    target: { kind: 'user', id },
    companies: [...(before?.companies ?? []), ...(after?.companies ?? [])],
    ...(before === undefined ? {} : { before: { username: id, ...before } }),
    ...(after === undefined ? {} : { after: { username: id, ...after } }),
  };
}

function query(rawQueryString: string): unknown {
  try {
    return routeInput(adminAuditList, { rawQueryString, pathParameters: {}, headers: {} } as unknown as APIGatewayProxyEventV2).query;
  } catch (error) {
    if (!(error instanceof BadRequestError)) throw error;
    return error.violations.map((violation) => violation.path);
  }
}

describe('listing the audit log', () => {
  it('lets a platform administrator list every entry, or filter by company and actor', async () => {
    const audit = recordingLog();
    await listAudit({ audit, users }, root, {}, { limit: 10 });
    await listAudit({ audit, users }, root, { company: 'umbrella', actor: 'carol' }, { limit: 10 });
    expect(audit.asked).toEqual([{}, { company: 'umbrella', actor: 'carol' }]);
  });

  it("recognises a platform administrator's Cognito token, which also carries aws.cognito.signin.user.admin", async () => {
    const audit = recordingLog();
    const cognitoRoot: Principal = { ...root, scopes: new Set([...ROLES['platform-admin'], 'aws.cognito.signin.user.admin']) };
    await listAudit({ audit, users }, cognitoRoot, {}, { limit: 10 });
    expect(audit.asked).toEqual([{}]);
  });

  it('lets a company administrator list only a named company of theirs (403 otherwise), with or without an actor', async () => {
    const audit = recordingLog();
    await listAudit({ audit, users }, admin, { company: 'globex' }, { limit: 10 });
    await listAudit({ audit, users }, admin, { company: 'initech', actor: 'root' }, { limit: 10 });
    await expect(listAudit({ audit, users }, admin, {}, { limit: 10 })).rejects.toThrow(
      /Name one of your companies with 'company' \(initech, globex\)/,
    );
    await expect(listAudit({ audit, users }, admin, { actor: 'root' }, { limit: 10 })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(listAudit({ audit, users }, admin, { company: 'umbrella' }, { limit: 10 })).rejects.toThrow(/company 'umbrella'/);
    expect(audit.asked).toEqual([{ company: 'globex' }, { company: 'initech', actor: 'root' }]);
  });

  it('leaves out, for a company administrator, the entries of users they do not administer (as the users listing does)', async () => {
    const entries: AuditEntry[] = [
      userEntry('amy', { role: 'operator', companies: ['initech'] }),
      // A platform admin who holds initech: a 404 for carol, so not listed either.
      userEntry('pia', { role: 'platform-admin', companies: ['initech'] }),
      // Moved by root to a company not carol's: its views are not all within her bounds.
      userEntry('max', { role: 'viewer', companies: ['initech'] }, { role: 'viewer', companies: ['umbrella'] }),
      {
        ...userEntry('ida', { role: 'viewer', companies: ['initech'] }),
        action: 'company.updated',
        target: { kind: 'company', id: 'initech' },
      },
    ];
    const forCarol = await listAudit({ audit: recordingLog(entries), users }, admin, { company: 'initech' }, { limit: 10 });
    expect(forCarol.items.map((entry) => entry.target.id)).toEqual(['amy', 'initech']);
    const forRoot = await listAudit({ audit: recordingLog(entries), users }, root, { company: 'initech' }, { limit: 10 });
    expect(forRoot.items).toHaveLength(4);
  });

  it('refuses a caller without users:read, even naming their own company', async () => {
    const audit = recordingLog();
    await expect(listAudit({ audit, users }, operator, { company: 'initech' }, { limit: 10 })).rejects.toThrow(/users:read/);
    expect(audit.asked).toEqual([]);
  });

  it("reads with the caller as they are now: a demoted or disabled administrator's earlier token reads nothing", async () => {
    const audit = recordingLog();
    try {
      users.callers.carol = { role: 'operator', companies: ['initech', 'globex'] };
      await expect(listAudit({ audit, users }, admin, { company: 'initech' }, { limit: 10 })).rejects.toThrow(
        /Your role is now operator, which does not grant 'users:read'/,
      );
      users.callers.carol = { role: 'company-admin', companies: ['globex'] };
      await expect(listAudit({ audit, users }, admin, { company: 'initech' }, { limit: 10 })).rejects.toThrow(/company 'initech'/);
      users.callers.carol = { role: 'company-admin', companies: ['initech', 'globex'], enabled: false };
      await expect(listAudit({ audit, users }, admin, { company: 'initech' }, { limit: 10 })).rejects.toThrow(/disabled or deleted/);
      users.callers.root = { role: 'company-admin', companies: ['initech'] };
      await expect(listAudit({ audit, users }, root, {}, { limit: 10 })).rejects.toBeInstanceOf(ForbiddenError);
      expect(audit.asked).toEqual([]);
    } finally {
      users.callers.carol = { role: 'company-admin', companies: ['initech', 'globex'] };
      users.callers.root = { role: 'platform-admin' };
    }
  });
});

describe('GET /admin/audit', () => {
  it("is a users:read route of the main address, reading the audit table and the caller's own user", () => {
    expect(ROUTES).toContain(adminAuditList);
    expect(matchRoute(ROUTES, 'main', 'GET', '/admin/audit')).toMatchObject({ route: { id: 'AdminAuditList' } });
    expect([adminAuditList.scope, 'companyParameter' in adminAuditList]).toEqual(['users:read', false]);
    expect(adminAuditList.access).toEqual({ storage: false, pagesListings: true, tables: { audit: 'R' }, userPool: ['AdminGetUser'] });
  });

  it('takes company, actor, limit and cursor, and refuses a malformed company or an unknown parameter', () => {
    expect(query('company=initech&actor=carol%40example.com&limit=5')).toEqual({
      company: 'initech',
      actor: 'carol@example.com',
      limit: 5,
    });
    expect(query('')).toEqual({ limit: 100 });
    expect(query('company=in%20itech')).toEqual(['company']);
    expect(query('actor=')).toEqual(['actor']);
    expect(query('user=carol')).toEqual(['user']);
    expect(query('limit=0')).toEqual(['limit']);
  });
});
