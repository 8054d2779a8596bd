import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { companiesArgument, roleArgument } from '../../../cli/commands/admin-users.js';
import { dssProgram } from '../../../cli/main.js';

describe('dss admin users', () => {
  it('takes a role by its name, and names the roles otherwise', () => {
    expect(roleArgument('company-admin')).toBe('company-admin');
    for (const bad of ['admin', 'Viewer', '']) {
      expect(() => roleArgument(bad), bad).toThrow(InvalidArgumentError);
      expect(() => roleArgument(bad), bad).toThrow('viewer, operator, company-admin, platform-admin');
    }
  });

  it('reads companies separated by commas, none when empty', () => {
    expect(companiesArgument('acme')).toEqual(['acme']);
    expect(companiesArgument('acme, globex,')).toEqual(['acme', 'globex']);
    expect(companiesArgument('')).toEqual([]);
  });

  it('registers every subcommand under dss admin users', () => {
    const admin = dssProgram().commands.find((command) => command.name() === 'admin');
    const users = admin?.commands.find((command) => command.name() === 'users');
    expect(users?.commands.map((command) => command.name())).toEqual([
      'invite',
      'list',
      'get',
      'update',
      'disable',
      'enable',
      'delete',
      'reset-password',
    ]);
  });
});
