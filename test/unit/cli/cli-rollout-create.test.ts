/**
 * What `dss rollout create` takes for a command rollout on its command line: `--expires-in` as seconds or a whole
 * number of one unit within the commands' bounds, and `--arguments` as JSON; a bad value is a usage error naming the
 * forms accepted.
 */
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { expiresInArgument as expiresIn, jsonArgument } from '../../../cli/command-arguments.js';

describe('dss rollout create --command', () => {
  it('reads --expires-in as seconds, or a whole number of seconds, minutes, hours or days, from 10 s to 7 days', () => {
    expect(expiresIn('600')).toBe(600);
    expect(expiresIn('90s')).toBe(90);
    expect(expiresIn('10m')).toBe(600);
    expect(expiresIn('2H')).toBe(7_200);
    expect(expiresIn('7d')).toBe(604_800);
    for (const text of ['9', '8d', '1.5h', '10 minutes', '', '-5m']) expect(() => expiresIn(text), text).toThrow(InvalidArgumentError);
    expect(() => expiresIn('8d')).toThrow(/from 10 s to 7 days \(604800 s\): seconds, or a whole number with s, m, h or d/);
  });

  it('reads --arguments as any JSON value, and says why a text is not JSON', () => {
    expect(jsonArgument('{"copies":2}')).toEqual({ copies: 2 });
    expect(jsonArgument('[1,"a"]')).toEqual([1, 'a']);
    expect(jsonArgument('"text"')).toBe('text');
    expect(() => jsonArgument('{copies:2}')).toThrow(/not valid JSON \(.+\); e\.g\./);
  });
});
