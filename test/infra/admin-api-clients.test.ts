/**
 * The API clients administration function on AWS (one function serves the six routes): its role holds exactly the
 * grants the routes' `access` declares (the apiClients table and its two indexes read and written, the companies table
 * read, audit entries written, the caller's own user read), nothing on another table, no bucket, no search, no queue,
 * no key; and it gets the cursor key.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API_CLIENT_ROUTES, adminApiClientCreate } from '../../functions/contract/routes/admin-api-clients.js';
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

describe('API clients administration on AWS', () => {
  let stateless: Template;
  let functions: Map<string, [string, Resource]>;

  beforeAll(() => {
    ({ stateless } = quickStage());
    functions = functionsByEntry(stateless);
  });

  it('serves the six routes from one function with the apiClients table read and written, companies read, audit entries written and the caller read', () => {
    expect(new Set(ADMIN_API_CLIENT_ROUTES.map((route) => route.entry))).toEqual(new Set([adminApiClientCreate.entry]));
    const found = functions.get(adminApiClientCreate.entry);
    expect(found).toBeDefined();
    const [id, fn] = found as [string, Resource];
    expect(grantsOf(stateless, fn)).toEqual({
      ...baseGrants(id),
      ...tableReads('apiClients'),
      [tableId('apiClients')]: READ_WRITE,
      // A client's company must exist.
      ...tableReads('companies'),
      // Each change records its audit entry.
      [tableId('audit')]: WRITE,
      // Every request reads the caller's own user (currentAdministrator).
      IdentityUserPool: ['cognito-idp:AdminGetUser'],
    });
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(flattenJoin(variables.CURSOR_SIGNING_KEY)).toMatch(/^\{\{resolve:secretsmanager:.*:SecretString:::\}\}$/);
  });
});
