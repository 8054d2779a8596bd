import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compactVerify, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { ulid } from 'ulid';
import type { HashSlot, IdentityProvider, SignInOutcome, SignInRequest } from '../../core/access/ports.js';
import { scopeClaimOf } from '../../core/access/roles.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_DAYS } from '../../core/access/user-tokens.js';
import type { ClientTokenClaims } from '../../core/clients/model.js';
import type { DeviceTokenClaims, DeviceTokenSigner } from '../../core/devices/ports.js';
import { type LocalRefreshToken, type LocalUser, LocalUserStore } from './local-user-store.js';

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number },
) => Promise<Buffer>;
const SCRYPT = { N: 16_384, r: 8, p: 1, length: 32 };

export type { LocalUser } from './local-user-store.js';

/** Hashes a password with scrypt into the `scrypt$N$r$p$salt$hash` form stored in users.json. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, SCRYPT.length, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Checks a password against a stored hash in constant time. Malformed hashes never match. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(expected, actual);
}

/** Most refresh tokens a local user holds: a new sign-in beyond them forgets the oldest. */
export const MAX_REFRESH_TOKENS_PER_USER = 20;

/** Lifetime of a local refresh token, ms. */
const REFRESH_TOKEN_LIFETIME_MS = REFRESH_TOKEN_LIFETIME_DAYS * 86_400_000;

/** A stored hash no password matches, hashed for unknown users so that time does not tell which usernames exist. */
const NO_USER_HASH = `scrypt$16384$8$1$${'A'.repeat(24)}$${'A'.repeat(44)}`;

/** The SHA-256 (hex) of a refresh token: what users.json keeps of it. */
function refreshTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** File names inside the local authentication folder. */
export const SIGNING_KEY_FILE = 'signing-key.json';
export const USERS_FILE = 'users.json';

/**
 * The local token issuer: verifies username/password against users.json (with the new-password challenge and
 * password changes), keeps refresh tokens there (as SHA-256), and signs ES256 JWTs with a key pair generated on
 * first start (kept in the folder). User tokens carry `sub`, `username`, `companies`, `scope`, `iss`, `aud`, `iat`,
 * `nbf`, `exp`, `jti`. Stands in for Cognito locally. It also signs device tokens (DeviceTokenSigner) with the same
 * key, so the same JWKS verifies both.
 */
export class LocalIdentityProvider implements IdentityProvider, DeviceTokenSigner {
  private constructor(
    private readonly settings: { issuer: string; audience: string; tokenLifetimeSeconds: number; now: () => number },
    private readonly privateKey: Awaited<ReturnType<typeof importJWK>>,
    private readonly publicJwk: JWK,
    /** The users (users.json), which users administration changes at run time. */
    readonly users: LocalUserStore,
    private readonly publicKey: Awaited<ReturnType<typeof importJWK>>,
  ) {}

  /**
   * Loads the key pair (creating it on first use) and users.json from `directory`. `tokenLifetimeSeconds` is the
   * access tokens' lifetime (@default ACCESS_TOKEN_LIFETIME_SECONDS, 900); `now` the clock refresh tokens expire by
   * (epoch ms; @default Date.now).
   * @throws Error when users.json is missing or not valid JSON.
   */
  static async fromDirectory(
    directory: string,
    settings: { issuer: string; audience: string; tokenLifetimeSeconds?: number; now?: () => number },
  ): Promise<LocalIdentityProvider> {
    await mkdir(directory, { recursive: true });
    const keyPath = join(directory, SIGNING_KEY_FILE);
    let privateJwk: JWK;
    try {
      privateJwk = JSON.parse(await readFile(keyPath, 'utf8')) as JWK;
    } catch {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      privateJwk = { ...(await exportJWK(privateKey)), kid: ulid(), alg: 'ES256', use: 'sig' };
      await writeFile(keyPath, JSON.stringify(privateJwk), { mode: 0o600 });
    }
    const { d: _private, ...publicJwk } = privateJwk;
    const users = await LocalUserStore.open(join(directory, USERS_FILE));
    return new LocalIdentityProvider(
      {
        issuer: settings.issuer,
        audience: settings.audience,
        tokenLifetimeSeconds: settings.tokenLifetimeSeconds ?? ACCESS_TOKEN_LIFETIME_SECONDS,
        now: settings.now ?? Date.now,
      },
      await importJWK(privateJwk, 'ES256'),
      publicJwk,
      users,
      await importJWK(publicJwk, 'ES256'),
    );
  }

  /** The public key set to publish at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /** @inheritdoc */
  async sign(claims: DeviceTokenClaims | ClientTokenClaims, lifetimeSeconds: number): Promise<string> {
    return this.signed({ ...claims }, lifetimeSeconds);
  }

  /** A JWT of `claims` (with `sub`) plus iss, aud, iat, nbf, exp and a fresh jti, signed with the issuer's key. */
  private signed(claims: Record<string, unknown> & { sub: string }, lifetimeSeconds: number): Promise<string> {
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: 'ES256', kid: this.publicJwk.kid as string, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(this.settings.issuer)
      .setAudience(this.settings.audience)
      .setIssuedAt()
      .setNotBefore('0s')
      .setExpirationTime(`${lifetimeSeconds}s`)
      .setJti(ulid())
      .sign(this.privateKey);
  }

  /**
   * Checks the password against users.json (hashed through `slot`, also for unknown users). A disabled user is
   * refused like a wrong password. A user with `mustChangePassword` gets the challenge unless `newPassword` is given;
   * with `newPassword` (challenge or not) the password is replaced by it and the flag cleared. On success a refresh
   * token is kept (its SHA-256, expiring in REFRESH_TOKEN_LIFETIME_DAYS; the user's newest MAX_REFRESH_TOKENS_PER_USER
   * only, expired ones dropped), in the same write as a new password, which forgets the user's other refresh tokens.
   * @inheritdoc
   */
  async signIn(request: SignInRequest, slot: HashSlot = (hash) => hash()): Promise<SignInOutcome> {
    const user = this.users.get(request.username);
    const checked = await slot(async () => {
      const matches = await verifyPassword(request.password, user?.passwordHash ?? NO_USER_HASH);
      // The new password's hash runs in the same slot: it costs what a check does.
      const newHash = matches && request.newPassword !== undefined ? await hashPassword(request.newPassword) : undefined;
      return { matches, newHash };
    });
    if (user === undefined || !checked.matches || user.enabled === false) return { outcome: 'refused' };
    if (user.mustChangePassword === true && checked.newHash === undefined) return { outcome: 'new-password-required' };
    const refreshToken = randomBytes(32).toString('base64url');
    const now = this.settings.now();
    const kept = await this.users.update(user.username, (current) => {
      // Disabled, deleted or given another password while the hash ran: this sign-in no longer stands.
      if (current === undefined || current.enabled === false || current.passwordHash !== user.passwordHash) return undefined;
      const issued = { sha256: refreshTokenHash(refreshToken), expiresAt: now + REFRESH_TOKEN_LIFETIME_MS };
      if (checked.newHash === undefined) {
        return { ...current, refreshTokens: [...liveRefreshTokens(current, now), issued].slice(-MAX_REFRESH_TOKENS_PER_USER) };
      }
      // A new password ends the user's other sessions: their refresh tokens are forgotten, this sign-in's kept.
      const refreshTokens = [issued];
      const { mustChangePassword: _done, ...rest } = current;
      return { ...rest, passwordHash: checked.newHash, refreshTokens, updatedAt: new Date(now).toISOString() };
    });
    if (kept === undefined) return { outcome: 'refused' };
    return { outcome: 'signed-in', tokens: { ...(await this.accessTokenOf(kept)), refreshToken } };
  }

  /**
   * Finds the user holding `refreshToken` (by its SHA-256) and signs a new access token from their record as it is
   * now; undefined for an unknown or expired token, or a disabled or deleted user.
   * @inheritdoc
   */
  async refresh(refreshToken: string): Promise<{ accessToken: string; expiresInSeconds: number } | undefined> {
    const sha256 = refreshTokenHash(refreshToken);
    const now = this.settings.now();
    const user = this.users
      .all()
      .find((candidate) => (candidate.refreshTokens ?? []).some((held) => held.sha256 === sha256 && held.expiresAt > now));
    if (user === undefined || user.enabled === false) return undefined;
    return this.accessTokenOf(user);
  }

  /**
   * Forgets `refreshToken` (by its SHA-256) from the user holding it, in users.json; a token nobody holds is no error.
   * @returns `unsupported` for a token this issuer signed (an access token, a device's), which only expiry ends;
   *   `revoked` otherwise, also for any other string (RFC 7009 §2.2: an invalid token is no error).
   * @inheritdoc
   */
  async revoke(refreshToken: string): Promise<'revoked' | 'unsupported'> {
    if (await this.signedHere(refreshToken)) return 'unsupported';
    const sha256 = refreshTokenHash(refreshToken);
    const holder = this.users.all().find((candidate) => (candidate.refreshTokens ?? []).some((held) => held.sha256 === sha256));
    if (holder === undefined) return 'revoked';
    await this.users.update(holder.username, (current) =>
      current === undefined
        ? undefined
        : { ...current, refreshTokens: (current.refreshTokens ?? []).filter((held) => held.sha256 !== sha256) },
    );
    return 'revoked';
  }

  /** Whether `token` is a JWT whose signature this issuer's key verifies, expired or not (a refresh token never is). */
  private async signedHere(token: string): Promise<boolean> {
    if (token.split('.').length !== 3) return false;
    try {
      await compactVerify(token, this.publicKey);
      return true;
    } catch {
      return false;
    }
  }

  /** An access token of `user` (role's scopes, companies), valid the configured lifetime. */
  private async accessTokenOf(user: LocalUser): Promise<{ accessToken: string; expiresInSeconds: number }> {
    const accessToken = await this.signed(
      { sub: user.username, username: user.username, companies: user.companies, scope: scopeOf(user) },
      this.settings.tokenLifetimeSeconds,
    );
    return { accessToken, expiresInSeconds: this.settings.tokenLifetimeSeconds };
  }
}

/** The refresh tokens of `user` that have not expired at `now` (epoch ms), oldest first. */
function liveRefreshTokens(user: LocalUser, now: number): LocalRefreshToken[] {
  return (user.refreshTokens ?? []).filter((held) => held.expiresAt > now).sort((a, b) => a.expiresAt - b.expiresAt);
}

/** The scopes a local user's token carries: their role's, or (a user of an older data folder without one) their `scope`. */
export function scopeOf(user: LocalUser): string {
  return user.role === undefined ? user.scope : scopeClaimOf(user.role);
}
