import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { ulid } from 'ulid';
import type { HashSlot, IdentityProvider } from '../../core/access/ports.js';
import { scopeClaimOf } from '../../core/access/roles.js';
import type { DeviceTokenClaims, DeviceTokenSigner } from '../../core/devices/ports.js';
import { type LocalUser, LocalUserStore } from './local-user-store.js';

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

/** File names inside the local authentication folder. */
export const SIGNING_KEY_FILE = 'signing-key.json';
export const USERS_FILE = 'users.json';

/**
 * The local token issuer: verifies username/password against users.json and signs ES256 JWTs with a key pair
 * generated on first start (kept in the folder). Tokens carry `sub`, `companies`, `scope`, `iss`, `aud`, `iat`,
 * `nbf`, `exp`, `jti`. Stands in for Cognito locally. It also signs device tokens (DeviceTokenSigner) with the same
 * key, so the same JWKS verifies both.
 */
export class LocalIdentityProvider implements IdentityProvider, DeviceTokenSigner {
  private constructor(
    private readonly settings: { issuer: string; audience: string; tokenLifetimeSeconds: number },
    private readonly privateKey: Awaited<ReturnType<typeof importJWK>>,
    private readonly publicJwk: JWK,
    /** The users (users.json), which users administration changes at run time. */
    readonly users: LocalUserStore,
  ) {}

  /**
   * Loads the key pair (creating it on first use) and users.json from `directory`.
   * @throws Error when users.json is missing or not valid JSON.
   */
  static async fromDirectory(
    directory: string,
    settings: { issuer: string; audience: string; tokenLifetimeSeconds?: number },
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
      { issuer: settings.issuer, audience: settings.audience, tokenLifetimeSeconds: settings.tokenLifetimeSeconds ?? 3_600 },
      await importJWK(privateJwk, 'ES256'),
      publicJwk,
      users,
    );
  }

  /** The public key set to publish at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /** @inheritdoc */
  async sign(claims: DeviceTokenClaims, lifetimeSeconds: number): Promise<string> {
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

  /** @inheritdoc */
  async issueToken(
    username: string,
    password: string,
    slot: HashSlot = (hash) => hash(),
  ): Promise<{ accessToken: string; expiresInSeconds: number } | undefined> {
    const user = this.users.get(username);
    // Hash even for unknown users so response time does not reveal which usernames exist.
    const matches = await slot(() =>
      verifyPassword(password, user?.passwordHash ?? `scrypt$16384$8$1$${'A'.repeat(24)}$${'A'.repeat(44)}`),
    );
    if (user === undefined || !matches || user.enabled === false) return undefined;
    const accessToken = await this.signed(
      { sub: user.username, username: user.username, companies: user.companies, scope: scopeOf(user) },
      this.settings.tokenLifetimeSeconds,
    );
    return { accessToken, expiresInSeconds: this.settings.tokenLifetimeSeconds };
  }
}

/** The scopes a local user's token carries: their role's, or (a user of an older data folder without one) their `scope`. */
export function scopeOf(user: LocalUser): string {
  return user.role === undefined ? user.scope : scopeClaimOf(user.role);
}
