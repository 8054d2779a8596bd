/**
 * The roles an API client may hold as the API clients page offers them. Their names are the contract's
 * (`ApiClient.role`): the list below is checked against it at compile time, so a role added to the service fails the
 * console's type check until it is offered here. No DOM and no session: the tests read the same names.
 */
import type { components } from '../../../client/index.js';

/** A client's role, as the API writes it. */
export type ApiClientRole = components['schemas']['ApiClient']['role'];

/** The roles a client may hold, with what each may do, lowest first. */
export const API_CLIENT_ROLES = [
  { role: 'viewer', label: 'Viewer: reads and searches the company’s fleet' },
  { role: 'operator', label: 'Operator: also uploads, deploys, and changes devices and alert rules' },
] as const satisfies readonly { role: ApiClientRole; label: string }[];

// Fails to compile when the contract has a role the list above lacks.
const everyRoleListed: Exclude<ApiClientRole, (typeof API_CLIENT_ROLES)[number]['role']> extends never ? true : never = true;
void everyRoleListed;

/** A role's short name for tables (`Operator`); an unknown role as it is. */
export function clientRoleName(role: string): string {
  return (API_CLIENT_ROLES.find((entry) => entry.role === role)?.label ?? role).replace(/:.*$/, '');
}
