/**
 * The numbers of JSON request bodies (unstorableNumber): what DynamoDB cannot store is refused with a 400 naming it
 * on every JSON route, and -0 is read as 0.
 */
import { describe, expect, it } from 'vitest';
import { devicePut } from '../../../functions/contract/routes/devices.js';
import { rolloutCreate } from '../../../functions/contract/routes/rollouts.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { unstorableNumber } from '../../../functions/core/shared/json-numbers.js';
import { problemOf } from '../../../functions/platform/problem.js';
import { bodyOfText } from '../../support/route-input.js';

describe('unstorableNumber', () => {
  it('accepts 0, -0 and every magnitude from 1e-130 to below 1e126, and names the first number outside', () => {
    expect(unstorableNumber({ a: [0, -0, 1e-130, -1e-130, 9.99999999999999e125, -9.99999999999999e125, 2 ** 60, 0.1] })).toBeUndefined();
    expect(unstorableNumber({ a: [1, { 'b/c~': 1e-131 }] })).toEqual({ pointer: '/a/1/b~1c~0', value: 1e-131 });
    expect(unstorableNumber([1e126])).toEqual({ pointer: '/0', value: 1e126 });
    expect(unstorableNumber({ x: Number.POSITIVE_INFINITY })).toEqual({ pointer: '/x', value: Number.POSITIVE_INFINITY });
    expect(unstorableNumber({ x: Number.NaN })?.pointer).toBe('/x');
    expect(unstorableNumber(5e-324)).toEqual({ pointer: '', value: 5e-324 });
  });

  it('turns -0 into 0 in place, so that a value read back from the store equals the one received', () => {
    const body = { delay: -0, list: [-0, { deep: -0 }] };
    expect(unstorableNumber(body)).toBeUndefined();
    expect(Object.is(body.delay, 0)).toBe(true);
    expect(Object.is(body.list[0], 0)).toBe(true);
    expect(Object.is((body.list[1] as { deep: number }).deep, 0)).toBe(true);
  });
});

describe('a JSON body with a number DynamoDB cannot store', () => {
  it('is a 400 naming the number on any JSON route, before its schema', () => {
    const cases: [Parameters<typeof bodyOfText>[0], string, string, Record<string, string>][] = [
      [
        devicePut,
        '{"serial":"S","geoLocation":{"latitude":1e-200,"longitude":0}}',
        '/geoLocation/latitude',
        { companyId: 'acme', deviceId: 'k1' },
      ],
      [
        rolloutCreate,
        '{"action":"DEPLOY","what":{"type":"SCENARIO","id":"s","subId":"1.0.0"},"targets":{"ids":["k1"]},"failureThreshold":1e-200}',
        '/failureThreshold',
        { companyId: 'acme' },
      ],
    ];
    for (const [route, text, pointer, params] of cases) {
      const error = (() => {
        try {
          bodyOfText(route, text, params);
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error, route.id).toBeInstanceOf(BadRequestError);
      expect(problemOf(error as BadRequestError).errors).toEqual([{ path: pointer, message: expect.stringContaining('1e-130') }]);
    }
  });
});
