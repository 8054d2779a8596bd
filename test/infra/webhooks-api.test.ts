/**
 * The webhooks API's function on AWS (one function serves its ten routes): its role holds exactly the grants the
 * routes' `access` declares (the webhooks table and its indexes read and written, audit entries written), nothing else; it gets the cursor
 * key; and WEBHOOK_ALLOWED_HTTP_HOSTS only when the `webhookAllowedHttpHosts` context names hosts (https only by
 * default).
 */
import { describe, expect, it } from 'vitest';
import { WEBHOOK_ROUTES, webhookCreate } from '../../functions/contract/routes/webhooks.js';
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

const variablesOf = (context: Record<string, unknown> = {}) => {
  const { stateless } = quickStage(context);
  const found = functionsByEntry(stateless).get(webhookCreate.entry);
  expect(found, webhookCreate.entry).toBeDefined();
  const [id, fn] = found as [string, Resource];
  return { id, fn, stateless, variables: (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables };
};

describe('the webhooks API on AWS', () => {
  it('serves every webhooks route from one function that reads and writes the webhooks table and writes audit entries only, with the cursor key and no http host', () => {
    expect(new Set(WEBHOOK_ROUTES.map((route) => route.entry))).toEqual(new Set([webhookCreate.entry]));
    const { id, fn, stateless, variables } = variablesOf();
    expect(grantsOf(stateless, fn)).toEqual({
      ...baseGrants(id),
      ...tableReads('webhooks'),
      [tableId('webhooks')]: READ_WRITE,
      // Each change of a webhook writes its audit entry in the same transaction.
      [tableId('audit')]: WRITE,
    });
    expect(flattenJoin(variables.CURSOR_SIGNING_KEY)).toMatch(/^\{\{resolve:secretsmanager:.*:SecretString:::\}\}$/);
    expect(variables).not.toHaveProperty('WEBHOOK_ALLOWED_HTTP_HOSTS');
  });

  it('names the hosts the webhookAllowedHttpHosts context allows plain http to', () => {
    const { variables } = variablesOf({ webhookAllowedHttpHosts: 'hooks.internal.example,10.20.0.5' });
    expect(variables.WEBHOOK_ALLOWED_HTTP_HOSTS).toBe('hooks.internal.example,10.20.0.5');
  });
});
