import { describe, expect, it } from 'vitest';
import { isPlatformAdmin, isRole, ROLE_NAMES, ROLES, roleCovering, roleOf, scopeClaimOf } from '../../../functions/core/access/roles.js';
import { SCOPES } from '../../../functions/core/shared/principal.js';

describe('ROLES', () => {
  it('maps each role to the documented scopes, each role holding every scope of the one before it', () => {
    expect(ROLES).toEqual({
      viewer: ['scenarios:read', 'deployments:read', 'search:read', 'devices:read', 'alerts:read'],
      operator: [
        'scenarios:read',
        'scenarios:write',
        'deployments:read',
        'deployments:write',
        'search:read',
        'devices:read',
        'devices:write',
        'webhooks:read',
        'alerts:read',
        'alerts:write',
      ],
      'company-admin': [
        'scenarios:read',
        'scenarios:write',
        'deployments:read',
        'deployments:write',
        'search:read',
        'devices:read',
        'devices:write',
        'users:read',
        'users:write',
        'webhooks:read',
        'webhooks:write',
        'alerts:read',
        'alerts:write',
      ],
      'platform-admin': [...SCOPES],
    });
    for (const [index, role] of ROLE_NAMES.entries()) {
      const previous = ROLE_NAMES[index - 1];
      if (previous !== undefined) expect(ROLES[role]).toEqual(expect.arrayContaining([...ROLES[previous]]));
    }
  });

  it('gives companies administration to the platform administrator only, and users administration from company-admin up', () => {
    const holders = (scope: string) => ROLE_NAMES.filter((role) => (ROLES[role] as readonly string[]).includes(scope));
    expect(holders('companies:write')).toEqual(['platform-admin']);
    expect(holders('companies:read')).toEqual(['platform-admin']);
    expect(holders('users:write')).toEqual(['company-admin', 'platform-admin']);
    expect(holders('devices:write')).toEqual(['operator', 'company-admin', 'platform-admin']);
    expect(holders('webhooks:write')).toEqual(['company-admin', 'platform-admin']);
    expect(holders('webhooks:read')).toEqual(['operator', 'company-admin', 'platform-admin']);
    expect(holders('alerts:write')).toEqual(['operator', 'company-admin', 'platform-admin']);
    expect(holders('alerts:read')).toEqual(ROLE_NAMES);
  });

  it('tells a role name from anything else', () => {
    expect(ROLE_NAMES.every(isRole)).toBe(true);
    for (const name of ['admin', 'root', 'Viewer', 'platform_admin', '']) expect(isRole(name), name).toBe(false);
  });

  it('writes a role as the scope claim its users get', () => {
    expect(scopeClaimOf('viewer')).toBe('scenarios:read deployments:read search:read devices:read alerts:read');
  });
});

describe('roleOf', () => {
  it('names the role whose scopes a token holds exactly, whatever their order and repetitions', () => {
    for (const role of ROLE_NAMES) expect(roleOf([...ROLES[role]].reverse())).toBe(role);
    expect(roleOf(['alerts:read', 'devices:read', 'search:read', 'deployments:read', 'scenarios:read', 'search:read'])).toBe('viewer');
  });

  it('names no role for a set that is not exactly one: more or fewer scopes, or an unknown one', () => {
    expect(roleOf([])).toBeUndefined();
    expect(roleOf(['scenarios:read'])).toBeUndefined();
    expect(roleOf([...ROLES.operator, 'users:read'])).toBeUndefined();
    expect(roleOf([...ROLES.viewer, 'device'])).toBeUndefined();
    expect(roleOf([...ROLES['platform-admin'], 'admin:everything'])).toBeUndefined();
  });
});

describe('roleCovering', () => {
  it('takes a scope list made before roles for the lowest role holding every scope of it', () => {
    expect(roleCovering(ROLES.viewer)).toBe('viewer');
    expect(roleCovering(['scenarios:read'])).toBe('viewer');
    expect(roleCovering([...ROLES.viewer, 'deployments:write'])).toBe('operator');
    // A viewer's scopes plus companies:write grant what only a platform admin holds: never shown as less.
    expect(roleCovering(['scenarios:read', 'companies:write'])).toBe('platform-admin');
    expect(roleCovering(['users:write'])).toBe('company-admin');
    // Scopes no role grants grant nothing.
    expect(roleCovering(['scenarios:read', 'aws.cognito.signin.user.admin'])).toBe('viewer');
    expect(roleCovering([])).toBe('viewer');
  });
});

describe('isPlatformAdmin', () => {
  it('holds for every scope of the role, with more scopes or without, and not for fewer', () => {
    expect(isPlatformAdmin(new Set(ROLES['platform-admin']))).toBe(true);
    expect(isPlatformAdmin(new Set([...ROLES['platform-admin'], 'aws.cognito.signin.user.admin']))).toBe(true);
    expect(isPlatformAdmin(new Set(ROLES['company-admin']))).toBe(false);
  });
});
