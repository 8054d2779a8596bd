/**
 * The roles as the administration pages offer them. Their names are the contract's (`User.role`): the list below is
 * checked against it at compile time, so a role added to the service fails the console's type check until it is
 * offered here. No DOM and no session: the tests read the same names.
 */
import type { components } from '../../../client/index.js';

/** A role's name, as the API writes it. */
export type Role = components['schemas']['User']['role'];

/** Every role, lowest first, with its name for people. */
export const ROLES = [
  { role: 'viewer', label: 'Viewer (reads everything of their companies)' },
  { role: 'operator', label: 'Operator (also uploads, deploys and manages devices)' },
  { role: 'company-admin', label: 'Company administrator (also manages the users of their companies)' },
  { role: 'platform-admin', label: 'Platform administrator (also manages companies and every user)' },
] as const satisfies readonly { role: Role; label: string }[];

// Fails to compile when the contract has a role the list above lacks.
const everyRoleListed: Exclude<Role, (typeof ROLES)[number]['role']> extends never ? true : never = true;
void everyRoleListed;

/** A role's short name for tables (`Company administrator`). */
export function roleName(role: string): string {
  const label = ROLES.find((entry) => entry.role === role)?.label ?? role;
  return label.replace(/ \(.*\)$/, '');
}

/**
 * The roles an administrator may grant: every role for a platform administrator (`platformAdmin`: their token holds
 * `companies:write`), else (a company administrator) every role but `platform-admin`. The service checks it again (a
 * company administrator grants at most their own role).
 */
export function grantableRoles(platformAdmin: boolean): (typeof ROLES)[number][] {
  return platformAdmin ? [...ROLES] : ROLES.filter((entry) => entry.role !== 'platform-admin');
}
