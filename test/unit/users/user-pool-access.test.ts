/**
 * The routes' `access.userPool` (the Cognito actions their function is granted on AWS) against what the user
 * directory calls (USER_DIRECTORY_ACTIONS, USER_COUNT_ACTIONS, checked against the adapter by its own tests): a
 * function missing an action would be refused by Cognito on AWS, one with more would hold a grant it never uses.
 */
import { describe, expect, it } from 'vitest';
import { USER_COUNT_ACTIONS, USER_DIRECTORY_ACTIONS } from '../../../functions/contract/cognito-attributes.js';
import { ROUTES } from '../../../functions/contract/routes.js';

const sorted = (actions: readonly string[]) => [...new Set(actions)].sort();

describe('the Cognito actions routes declare', () => {
  const declaring = ROUTES.filter((route) => (route.access?.userPool ?? []).length > 0);

  it('are every action of the user directory for users administration, ListUsers only for user counts elsewhere', () => {
    for (const route of declaring) {
      const actions = sorted(route.access?.userPool ?? []);
      if (route.scope === 'users:read' || route.scope === 'users:write') expect(actions, route.id).toEqual(sorted(USER_DIRECTORY_ACTIONS));
      else expect(actions, route.id).toEqual(sorted(USER_COUNT_ACTIONS));
    }
  });
});
