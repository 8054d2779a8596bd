/**
 * The nesting bound of JSON request bodies (tooDeepMember, on the text before it is parsed) and the 400 it gives
 * every JSON route through the shared input stage.
 */
import { describe, expect, it } from 'vitest';
import { deploymentsExecute } from '../../../functions/contract/routes/deployments.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { MAX_JSON_DEPTH, MAX_POINTER_CHARACTERS, tooDeepMember } from '../../../functions/core/shared/json-depth.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { bodyOfText } from '../../support/route-input.js';

/** `levels` arrays, one inside the other, around `inner`. */
const nested = (levels: number, inner = '') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;

describe('tooDeepMember', () => {
  it('accepts a text nested exactly the maximum and names the first container one level deeper', () => {
    expect(tooDeepMember(nested(MAX_JSON_DEPTH, '1'))).toBeUndefined();
    expect(tooDeepMember(nested(MAX_JSON_DEPTH + 1, '1'))).toBe('/0'.repeat(MAX_JSON_DEPTH));
    expect(tooDeepMember('{"a":[1,2,{"b":{"c":[]}}]}', 3)).toBe('/a/2/b');
    expect(tooDeepMember('{"a":1,"b":[[0],[1,[2]]]}', 3)).toBe('/b/1/1');
    expect(tooDeepMember('{"a":{},"b":{"c":{}}}', 2)).toBe('/b/c');
  });

  it('counts no bracket inside a string, escaped quotes included, and escapes names as RFC 6901 says', () => {
    expect(tooDeepMember(`{"x":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`, 1)).toBeUndefined();
    expect(tooDeepMember('{"a/b~c\\"d":{"e":[]}}', 2)).toBe('/a~1b~0c"d/e');
    expect(tooDeepMember('{"k":"v","\\u0041":[[]]}', 2)).toBe('/A/0');
    // An escaped backslash then an escaped quote (the string goes on), and a name ending in an escaped backslash.
    expect(tooDeepMember('{"b\\\\\\"[":1,"a\\\\":[[]]}', 2)).toBe('/a\\/0');
  });

  it('scans a million levels without recursion and bounds the pointer it returns', () => {
    expect(tooDeepMember(nested(1_000_000))).toBe('/0'.repeat(MAX_JSON_DEPTH));
    const long = 'n'.repeat(10_000);
    const pointer = tooDeepMember(`{"${long}":${nested(MAX_JSON_DEPTH)}}`) as string;
    expect(pointer.length).toBe(MAX_POINTER_CHARACTERS);
    expect(pointer.startsWith(`/${'n'.repeat(100)}`)).toBe(true);
    expect(pointer.endsWith('…')).toBe(true);
  });

  it('leaves text that is not JSON to the parser', () => {
    expect(tooDeepMember(`"${nested(100)}`, 1)).toBeUndefined();
    expect(tooDeepMember(']]]{}', 1)).toBeUndefined();
  });
});

describe('a JSON body nested too deep', () => {
  it('is a 400 naming the first member too deep, on any JSON route', () => {
    try {
      bodyOfText(deploymentsExecute, nested(100_000));
      expect.unreachable('the body is too deep');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      const problem = problemOf(error as BadRequestError);
      expect(problem.status).toBe(400);
      expect(problem.errors).toEqual([{ path: '/0'.repeat(MAX_JSON_DEPTH), message: `nested more than ${MAX_JSON_DEPTH} levels deep` }]);
      expect(problem.detail).toContain(`at most ${MAX_JSON_DEPTH} levels`);
    }
  });
});
