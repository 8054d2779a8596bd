import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { clientRoleArgument, overlapArgument } from '../../../cli/commands/admin-api-clients.js';
import { dssProgram } from '../../../cli/main.js';

describe('dss admin api-clients', () => {
  it("takes a client's role by its name, and names the two roles otherwise", () => {
    expect(clientRoleArgument('viewer')).toBe('viewer');
    expect(clientRoleArgument('operator')).toBe('operator');
    for (const bad of ['company-admin', 'platform-admin', 'Operator', '']) {
      expect(() => clientRoleArgument(bad), bad).toThrow(InvalidArgumentError);
      expect(() => clientRoleArgument(bad), bad).toThrow('viewer, operator');
    }
  });

  it('takes an overlap of 0 to 86400 whole seconds, and refuses anything else naming the bounds', () => {
    expect(overlapArgument('0')).toBe(0);
    expect(overlapArgument('3600')).toBe(3600);
    expect(overlapArgument('86400')).toBe(86_400);
    for (const bad of ['86401', '-1', '1.5', '1h', '', ' ']) {
      expect(() => overlapArgument(bad), bad).toThrow(InvalidArgumentError);
      expect(() => overlapArgument(bad), bad).toThrow('0 to 86400');
    }
  });

  it('registers every subcommand under dss admin api-clients', () => {
    const admin = dssProgram().commands.find((command) => command.name() === 'admin');
    const clients = admin?.commands.find((command) => command.name() === 'api-clients');
    expect(clients?.commands.map((command) => command.name())).toEqual([
      'create',
      'list',
      'get',
      'update',
      'rotate',
      'disable',
      'enable',
      'delete',
    ]);
    const rotate = clients?.commands.find((command) => command.name() === 'rotate');
    expect(rotate?.options.map((option) => option.long)).toEqual(['--previous-secret-valid-seconds']);
  });
});
