/** The users' password policy (functions/core/access/password-policy.ts): Cognito's default, checked locally. */
import { describe, expect, it } from 'vitest';
import { checkNewPassword, missingFromPassword, PASSWORD_POLICY } from '../../../functions/core/access/password-policy.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';

describe('the password policy', () => {
  it("is Cognito's default: 8 to 256 characters, lowercase, uppercase, digit and symbol", () => {
    expect(PASSWORD_POLICY).toEqual({
      minLength: 12,
      maxLength: 256,
      requireLowercase: true,
      requireUppercase: true,
      requireDigits: true,
      requireSymbols: true,
    });
  });

  it.each([
    ['Correct-horse-9', []],
    ['Aa1!aaaaaaaa', []],
    ['Aa1 aaaaaaaa', []],
    ['Aa1!aaaaaaa', ['at least 12 characters']],
    ['correct-horse-9', ['an uppercase letter']],
    ['CORRECT-HORSE-9', ['a lowercase letter']],
    ['Correct-horse-x', ['a digit']],
    ['Correcthorse99', ['a symbol']],
    [' Correcthorse9 ', ['a symbol']],
    ['Correcthorse9€', ['a symbol']],
    ['', ['at least 12 characters', 'a lowercase letter', 'an uppercase letter', 'a digit', 'a symbol']],
    [`Aa1!${'a'.repeat(253)}`, ['at most 256 characters']],
  ])('finds what %j lacks: %j', (password, missing) => {
    expect(missingFromPassword(password)).toEqual(missing);
  });

  it('refuses a password outside it with a 400 stating the policy and naming what it lacks', () => {
    let thrown: unknown;
    try {
      checkNewPassword('horse');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestError);
    expect((thrown as BadRequestError).message).toMatch(
      /^The new password does not meet the password policy: at least 12 and at most 256 characters, with a lowercase letter, an uppercase letter, a digit and a symbol/,
    );
    expect((thrown as BadRequestError).violations).toEqual([
      { path: '/new_password', message: 'lacks at least 12 characters, an uppercase letter, a digit, a symbol' },
    ]);
    expect(() => checkNewPassword('Correct-horse-9')).not.toThrow();
  });
});
