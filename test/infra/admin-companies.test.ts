/**
 * The companies administration function on AWS (one function serves the four routes): its role holds exactly the
 * grants the routes' `access` declares (the companies table read and written, the devices table read for the device
 * count, audit entries written, the user pool's ListUsers for the user count), nothing on another table, no bucket, no
 * search, no queue, no key; and it gets the cursor key.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLES, type TableName } from '../../functions/adapters/aws/tables.js';
import { adminCompaniesList, adminCompanyCreate, adminCompanyGet, adminCompanyUpdate } from '../../functions/contract/routes/admin.js';
import { DYNAMODB_READ_ACTIONS, DYNAMODB_WRITE_ACTIONS } from '../../lib/service-function.js';
import { asArray, flattenJoin, functionsByEntry, quickStage, type Resource, rolePoliciesOf, type Statement } from './template-helpers.js';

const READ = [...DYNAMODB_READ_ACTIONS].sort();
const READ_WRITE = [...new Set([...DYNAMODB_READ_ACTIONS, ...DYNAMODB_WRITE_ACTIONS])].sort();
const WRITE = [...DYNAMODB_WRITE_ACTIONS].sort();

/** The construct id prefix of a table of the stateful stack (`companies` → `CompaniesTable`). */
const tableId = (name: TableName) => `${name.charAt(0).toUpperCase()}${name.slice(1)}Table`;

/** Reads of a table and each of its indexes, by resource name. */
const tableReads = (name: TableName) =>
  Object.fromEntries(
    [
      tableId(name),
      ...((TABLES[name] as { globalSecondaryIndexes?: readonly { indexName: string }[] }).globalSecondaryIndexes ?? []).map(
        (index) => `${tableId(name)}/index/${index.indexName}`,
      ),
    ].map((id) => [id, READ]),
  );

/** A policy resource by the construct it names (`CompaniesTable`, `AdminCompanyGetFunctionLogs`), or `*`. */
function resourceName(resource: unknown): string {
  return flattenJoin(resource)
    .replace(/\{"Fn::ImportValue":"[^"]*ExportsOutputFnGetAtt([A-Za-z]+?)[0-9A-F]{8}Arn[0-9A-F]{8}"\}/g, '$1')
    .replace(/\{\{([A-Za-z]+?)[0-9A-F]{8}\.Arn\}\}/g, '$1');
}

/** Every action the role of `fn` is allowed, by resource name, each list sorted. */
function grantsOf(template: Template, fn: Resource): Record<string, string[]> {
  const grants: Record<string, Set<string>> = {};
  for (const [, policy] of rolePoliciesOf(template, fn)) {
    for (const statement of (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement) {
      expect(statement.Effect).toBe('Allow');
      for (const resource of asArray(statement.Resource)) {
        const name = resourceName(resource);
        grants[name] ??= new Set();
        for (const action of asArray(statement.Action)) grants[name].add(action);
      }
    }
  }
  return Object.fromEntries(Object.entries(grants).map(([name, actions]) => [name, [...actions].sort()]));
}

/** What every function's role has: X-Ray (no resource-level permissions) and its own log group. */
const baseGrants = (functionId: string) => ({
  '*': ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
  [`${functionId.replace(/[0-9A-F]{8}$/, '')}Logs`]: ['logs:CreateLogStream', 'logs:PutLogEvents'],
});

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
