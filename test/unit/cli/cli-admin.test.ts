import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { quotaArgument } from '../../../cli/commands/admin.js';
import { dssProgram } from '../../../cli/main.js';

describe('dss admin companies', () => {
  it('reads a quota as bytes or a whole number of a binary unit, up to 1 TiB', () => {
    expect(quotaArgument('0')).toBe(0);
    expect(quotaArgument('10485760')).toBe(10 * 1024 * 1024);
    expect(quotaArgument('10MiB')).toBe(10 * 1024 * 1024);
    expect(quotaArgument('1 GiB')).toBe(1024 ** 3);
    expect(quotaArgument('1TiB')).toBe(1024 ** 4);
    for (const bad of ['', '-1', '1.5MiB', '10MB', '2TiB', 'lots', String(1024 ** 4 + 1)]) {
      expect(() => quotaArgument(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it('registers create, list, get and update under dss admin companies', () => {
    const admin = dssProgram().commands.find((command) => command.name() === 'admin');
    const companies = admin?.commands.find((command) => command.name() === 'companies');
    expect(companies?.commands.map((command) => command.name())).toEqual(['create', 'list', 'get', 'update']);
  });
});
