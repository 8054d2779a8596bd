/**
 * The password policy of users (docs/contract.md, "Tokens"): Amazon Cognito's default rules with 12 characters at
 * least (the pool's length since its first release), which the CDK user pool sets explicitly from these constants (lib/identity.ts) and the local issuer checks with missingFromPassword, so a
 * password refused on one is refused on the other. Source of the rules and of the symbol set: the Cognito user pool
 * password policy (Amazon Cognito Developer Guide, "Adding user pool password requirements").
 */
import { randomInt } from 'node:crypto';
import { BadRequestError } from '../shared/errors.js';

/** The policy's settings, named as the CDK UserPool's `passwordPolicy` names them (minLength, requireDigits, ...). */
export const PASSWORD_POLICY = {
  /** Fewest characters (Cognito's MinimumLength may be 6 to 99; its default is 8): the pool's policy since its first release. */
  minLength: 12,
  /** Most characters: Cognito's limit on a password parameter (its API refuses longer ones). */
  maxLength: 256,
  requireLowercase: true,
  requireUppercase: true,
  requireDigits: true,
  requireSymbols: true,
} as const;

/**
 * The characters Cognito counts as symbols; a space that neither starts nor ends the password counts too
 * (PASSWORD_POLICY.requireSymbols).
 */
export const PASSWORD_SYMBOLS = '^$*.[]{}()?"!@#%&/\\,><\':;|_~`=+-';

/** The policy in words, as every refusal states it. */
export const PASSWORD_POLICY_TEXT =
  `at least ${PASSWORD_POLICY.minLength} and at most ${PASSWORD_POLICY.maxLength} characters, with a lowercase letter, ` +
  `an uppercase letter, a digit and a symbol: one of ${PASSWORD_SYMBOLS}, or a space that neither starts nor ends it`;

/** Whether `password` holds a symbol: one of PASSWORD_SYMBOLS, or a space that is neither its first nor its last character. */
function hasSymbol(password: string): boolean {
  if ([...password].some((character) => PASSWORD_SYMBOLS.includes(character))) return true;
  return password.length > 2 && password.slice(1, -1).includes(' ');
}

/**
 * What `password` lacks to meet PASSWORD_POLICY, in words (`at least 8 characters`, `an uppercase letter`, ...), in
 * the policy's order; empty when it meets it. Letters and digits are the basic Latin ones, as Cognito counts them;
 * length counts UTF-16 code units, as Cognito's does.
 */
export function missingFromPassword(password: string): string[] {
  const missing: string[] = [];
  if (password.length < PASSWORD_POLICY.minLength) missing.push(`at least ${PASSWORD_POLICY.minLength} characters`);
  if (password.length > PASSWORD_POLICY.maxLength) missing.push(`at most ${PASSWORD_POLICY.maxLength} characters`);
  if (PASSWORD_POLICY.requireLowercase && !/[a-z]/.test(password)) missing.push('a lowercase letter');
  if (PASSWORD_POLICY.requireUppercase && !/[A-Z]/.test(password)) missing.push('an uppercase letter');
  if (PASSWORD_POLICY.requireDigits && !/[0-9]/.test(password)) missing.push('a digit');
  if (PASSWORD_POLICY.requireSymbols && !hasSymbol(password)) missing.push('a symbol');
  return missing;
}

/**
 * The refusal of a new password that does not meet the policy: 400 problem+json whose detail states the policy, with
 * one violation at `/new_password` naming what is missing (`missing`: missingFromPassword's words, or none when the
 * identity provider refused it without saying why).
 */
export function passwordPolicyError(missing: readonly string[] = []): BadRequestError {
  const lacks = missing.length === 0 ? '' : ` It lacks ${missing.join(', ')}.`;
  return new BadRequestError(
    `The new password does not meet the password policy: ${PASSWORD_POLICY_TEXT}.${lacks} Choose another and send the request again.`,
    [{ path: '/new_password', message: missing.length === 0 ? `must have ${PASSWORD_POLICY_TEXT}` : `lacks ${missing.join(', ')}` }],
  );
}

/**
 * Checks a new password against the policy.
 * @throws BadRequestError (passwordPolicyError) naming what it lacks.
 */
export function checkNewPassword(password: string): void {
  const missing = missingFromPassword(password);
  if (missing.length > 0) throw passwordPolicyError(missing);
}

/**
 * Characters of a generated password, by class: one of each is always in it (the classes of PASSWORD_POLICY; the
 * symbols are among PASSWORD_SYMBOLS). Look-alike characters (l, I, O, 0, 1) and symbols a shell would interpret are
 * left out, so that a password can be read out and pasted.
 */
const PASSWORD_CLASSES = ['abcdefghijkmnopqrstuvwxyz', 'ABCDEFGHJKLMNPQRSTUVWXYZ', '23456789', '%+-.:=@_'] as const;

/**
 * A crypto-random password of `length` characters (at least PASSWORD_POLICY.minLength) holding a lowercase letter, an
 * uppercase letter, a digit and a symbol: it meets the password policy. About 5.9 bits per character.
 */
export function randomPassword(length: number): string {
  const all = PASSWORD_CLASSES.join('');
  const characters = PASSWORD_CLASSES.map((set) => set[randomInt(set.length)] as string);
  while (characters.length < Math.max(length, PASSWORD_POLICY.minLength)) characters.push(all[randomInt(all.length)] as string);
  // Fisher–Yates, so that the guaranteed classes are not always first.
  for (let index = characters.length - 1; index > 0; index--) {
    const other = randomInt(index + 1);
    [characters[index], characters[other]] = [characters[other] as string, characters[index] as string];
  }
  return characters.join('');
}
