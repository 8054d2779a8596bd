/** The roles the API clients page offers (console/src/admin/client-roles.ts): the contract's, in words. */
import { describe, expect, it } from 'vitest';
import { clientRoleName, API_CLIENT_ROLES as OFFERED } from '../../../console/src/admin/client-roles.js';
import { API_CLIENT_ROLES } from '../../../functions/core/clients/model.js';

describe("the API clients page's roles", () => {
  it('offers every role a client may hold, lowest first, and no other', () => {
    expect(OFFERED.map((entry) => entry.role)).toEqual([...API_CLIENT_ROLES]);
  });

  it('names each role shortly for the table, and an unknown one as it is', () => {
    expect(clientRoleName('viewer')).toBe('Viewer');
    expect(clientRoleName('operator')).toBe('Operator');
    expect(clientRoleName('auditor')).toBe('auditor');
  });
});
