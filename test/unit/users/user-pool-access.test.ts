/**
 * The routes' `access.userPool` (the Cognito actions their function is granted on AWS) against what the user
 * directory calls (USER_DIRECTORY_ACTIONS, USER_COUNT_ACTIONS, checked against the adapter by its own tests): a
 * function missing an action would be refused by Cognito on AWS, one with more would hold a grant it never uses.
 */
import { describe, expect, it } from 'vitest';
import { CURRENT_USER_ACTIONS, USER_COUNT_ACTIONS, USER_DIRECTORY_ACTIONS } from '../../../functions/contract/cognito-attributes.js';
import { ROUTES } from '../../../functions/contract/routes.js';

const sorted = (actions: readonly string[]) => [...new Set(actions)].sort();

describe('the Cognito actions routes declare', () => {
  const declaring = ROUTES.filter((route) => (route.access?.userPool ?? []).length > 0);

  it("are every action of the user directory for users administration, the caller's own user for the audit log and API clients, and that and ListUsers for companies", () => {
    for (const route of declaring) {
      const actions = sorted(route.access?.userPool ?? []);
      if (route.id === 'AdminAuditList' || route.id.startsWith('AdminApiClient'))
        expect(actions, route.id).toEqual(sorted(CURRENT_USER_ACTIONS));
      else if (route.scope === 'users:read' || route.scope === 'users:write')
        expect(actions, route.id).toEqual(sorted(USER_DIRECTORY_ACTIONS));
      else expect(actions, route.id).toEqual(sorted([...USER_COUNT_ACTIONS, ...CURRENT_USER_ACTIONS]));
    }
  });

  it('include reading the caller on every administration route: each bounds the token by the caller as they are now', () => {
    const administration = ROUTES.filter((route) => route.path.startsWith('/admin/'));
    expect(administration.length).toBeGreaterThanOrEqual(11);
    for (const route of administration) expect(route.access?.userPool ?? [], route.id).toContain('AdminGetUser');
  });
});
