import { describe, expect, it } from 'vitest';
import { changeSummary } from '../../../cli/commands/admin-audit.js';
import { dssProgram } from '../../../cli/main.js';

describe('dss admin audit', () => {
  it('registers list under dss admin audit, with the actor filter (the company is the global --company)', () => {
    const admin = dssProgram().commands.find((command) => command.name() === 'admin');
    const audit = admin?.commands.find((command) => command.name() === 'audit');
    expect(audit?.commands.map((command) => command.name())).toEqual(['list']);
    const options = audit?.commands[0]?.options.map((option) => option.long);
    expect(options).toEqual(expect.arrayContaining(['--actor', '--limit', '--cursor', '--all']));
  });

  it('shows what a change changed: the values that differ, every value of a creation or a deletion', () => {
    expect(
      changeSummary({
        before: { id: 'initech', name: 'Initech', quotaBytes: 1000 },
        after: { id: 'initech', name: 'Initech', quotaBytes: 2000 },
      }),
    ).toBe('quotaBytes 1000 → 2000');
    expect(changeSummary({ after: { id: 'initech', name: 'Initech' } })).toBe('id "initech", name "Initech"');
    expect(changeSummary({ before: { role: 'viewer' } })).toBe('role was "viewer"');
    expect(changeSummary({ before: { companies: ['a'] }, after: { companies: ['a', 'b'], enabled: true } })).toBe(
      'companies ["a"] → ["a","b"], enabled – → true',
    );
  });
});
