/**
 * The companies administration function on AWS (one function serves the four routes): its role holds exactly the
 * grants the routes' `access` declares (the companies table read and written, the devices table read for the device
 * count, audit entries written, the user pool's ListUsers for the user count), nothing on another table, no bucket, no
 * search, no queue, no key; and it gets the cursor key.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCompaniesList, adminCompanyCreate, adminCompanyGet, adminCompanyUpdate } from '../../functions/contract/routes/admin.js';
import {
  baseGrants,
  flattenJoin,
  functionsByEntry,
  grantsOf,
  quickStage,
  READ_WRITE,
  type Resource,
  tableId,
  tableReads,
  WRITE,
} from './template-helpers.js';

describe('companies administration on AWS', () => {
  let stateless: Template;
  let functions: Map<string, [string, Resource]>;

  beforeAll(() => {
    ({ stateless } = quickStage());
    functions = functionsByEntry(stateless);
  });

  const grantsOfEntry = (entry: string) => {
    const found = functions.get(entry);
    expect(found, entry).toBeDefined();
    const [id, fn] = found as [string, Resource];
    return { id, grants: grantsOf(stateless, fn) };
  };

  it('serves the four routes from one function with the companies table read and written, the devices table read, audit entries written, the user pool listed and the caller read', () => {
    const routes = [adminCompanyCreate, adminCompaniesList, adminCompanyGet, adminCompanyUpdate];
    expect(new Set(routes.map((route) => route.entry)).size).toBe(1);
    const { id, grants } = grantsOfEntry(adminCompanyCreate.entry);
    expect(grants).toEqual({
      ...baseGrants(id),
      ...tableReads('companies'),
      [tableId('companies')]: READ_WRITE,
      ...tableReads('devices'),
      // Each company change writes its audit entry in the same transaction.
      [tableId('audit')]: WRITE,
      // The user count of GET /admin/companies/{companyId} reads the pool (UserDirectory.countInCompany); every request
      // reads the caller's own user (currentAdministrator).
      IdentityUserPool: ['cognito-idp:AdminGetUser', 'cognito-idp:ListUsers'],
    });
  });

  it('gets the cursor key (it pages the companies)', () => {
    const [, fn] = functions.get(adminCompanyCreate.entry) as [string, Resource];
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(flattenJoin(variables.CURSOR_SIGNING_KEY)).toMatch(/^\{\{resolve:secretsmanager:.*:SecretString:::\}\}$/);
  });
});
