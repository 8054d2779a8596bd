/**
 * The KMS device token issuer (functions/adapters/aws/kms-device-token-signer.ts) against a stand-in for KMS that
 * holds a real P-256 key: Sign computes ECDSA on the digest it is given and answers DER, as KMS does with
 * MessageType DIGEST, and GetPublicKey answers the SPKI DER. Tokens are verified with jose against the key's public
 * JWK (exported by node:crypto, not by the adapter) and against the key set the adapter publishes.
 */
import { createECDH, createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  derToJoseSignature,
  KmsDeviceIssuerKeys,
  KmsDeviceTokenSigner,
  type KmsPublicKeyApi,
  type KmsSignApi,
  keyIdOf,
  openIdConfiguration,
} from '../../../functions/adapters/aws/kms-device-token-signer.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';

const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab';
const KEY_ARN = `arn:aws:kms:eu-west-1:123456789012:key/${KEY_ID}`;
const ISSUER = 'https://auth.example.test/device';
const AUDIENCE = 'https://api.example.test';
const CLAIMS = { sub: 'acme-kiosk-0001', companies: ['acme'], scope: 'device', client_id: 'acme~acme-kiosk-0001', cred: '01JCRED' };

/** Order of the P-256 group. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const toBigInt = (bytes: Buffer) => BigInt(`0x${bytes.toString('hex') || '0'}`);
const mod = (value: bigint, modulus: bigint) => ((value % modulus) + modulus) % modulus;
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = mod(base, modulus);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

/** Minimal DER INTEGER of a non-negative value: no leading zero byte unless the high bit would read as a sign. */
function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if ((bytes[0] as number) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/**
 * A stand-in for KMS with one real P-256 key: ECDSA over the 32-byte digest it is given (k·G by node's ECDH), DER
 * out. Records the byte length of each DER integer, so tests can tell which encodings they exercised.
 */
class FakeKms implements KmsSignApi, KmsPublicKeyApi {
  readonly integerLengths: number[][] = [];
  readonly signRequests: Parameters<KmsSignApi['sign']>[0][] = [];
  getPublicKeyCalls = 0;
  failNext: Error | undefined;
  private readonly d: bigint;

  constructor(
    readonly privateKey: KeyObject,
    readonly publicKey: KeyObject,
  ) {
    this.d = toBigInt(Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url'));
  }

  async sign(input: Parameters<KmsSignApi['sign']>[0]): Promise<{ Signature: Uint8Array }> {
    this.signRequests.push(input);
    if (this.failNext !== undefined) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    expect(input.Message).toHaveLength(32);
    const z = toBigInt(Buffer.from(input.Message));
    for (;;) {
      const k = mod(toBigInt(randomBytes(32)), N);
      if (k === 0n) continue;
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'));
      const r = mod(toBigInt(ecdh.getPublicKey().subarray(1, 33)), N);
      const s = mod(modPow(k, N - 2n, N) * (z + r * this.d), N);
      if (r === 0n || s === 0n) continue;
      const [derR, derS] = [derInteger(r), derInteger(s)];
      this.integerLengths.push([derR[1] as number, derS[1] as number]);
      return { Signature: Buffer.concat([Buffer.from([0x30, derR.length + derS.length]), derR, derS]) };
    }
  }

  async getPublicKey(input: { KeyId: string }): Promise<{ PublicKey: Uint8Array; KeySpec: string }> {
    expect(input.KeyId).toBe(KEY_ARN);
    this.getPublicKeyCalls += 1;
    if (this.failNext !== undefined) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    return { PublicKey: this.publicKey.export({ format: 'der', type: 'spki' }), KeySpec: 'ECC_NIST_P256' };
  }
}

function setup(now = () => Date.now()) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kms = new FakeKms(privateKey, publicKey);
  const signer = new KmsDeviceTokenSigner(kms, { keyArn: KEY_ARN, issuer: ISSUER, audience: AUDIENCE }, now);
  return { kms, signer, publicJwk: publicKey.export({ format: 'jwk' }) };
}

const kmsError = (name: string) => Object.assign(new Error(name), { name });

describe('KmsDeviceTokenSigner', () => {
  it('signs an ES256 JWT that jose verifies with the public key, carrying the claims, issuer, audience and lifetime', async () => {
    const now = Date.UTC(2026, 10, 23, 12, 0, 0);
    const { kms, signer, publicJwk } = setup(() => now);
    const token = await signer.sign(CLAIMS, 900);
    const { payload, protectedHeader } = await jwtVerify(token, await importJWK(publicJwk, 'ES256'), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['ES256'],
      currentDate: new Date(now + 1000),
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: KEY_ID });
    expect(payload).toMatchObject({ ...CLAIMS, iat: now / 1000, nbf: now / 1000, exp: now / 1000 + 900 });
    expect(payload.jti).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    // KMS got the SHA-256 digest of the signing input, never the key or the whole token.
    const [request] = kms.signRequests;
    expect(request).toMatchObject({ KeyId: KEY_ARN, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    const signingInput = token.split('.').slice(0, 2).join('.');
    expect(Buffer.from(request?.Message as Uint8Array)).toEqual(createHash('sha256').update(signingInput).digest());
  });

  it('keeps iss, aud and the times its own even when the claims name them', async () => {
    const { signer, publicJwk } = setup();
    const token = await signer.sign({ ...CLAIMS, iss: 'https://evil.example', aud: 'other', exp: 4_000_000_000 }, 60);
    const { payload } = await jwtVerify(token, await importJWK(publicJwk, 'ES256'), { issuer: ISSUER, audience: AUDIENCE });
    expect((payload.exp as number) - (payload.iat as number)).toBe(60);
  });

  it('verifies whatever length the DER integers have (33 bytes with a sign byte, 32, or shorter)', async () => {
    const { kms, signer, publicJwk } = setup();
    const key = await importJWK(publicJwk, 'ES256');
    // About one signature in 128 has an integer below 2^248 (31 bytes or fewer); half have a 33-byte one.
    for (let attempt = 0; attempt < 4000; attempt++) {
      const token = await signer.sign(CLAIMS, 900);
      await expect(jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE })).resolves.toBeDefined();
      expect(Buffer.from(token.split('.')[2] as string, 'base64url')).toHaveLength(64);
      const lengths = kms.integerLengths.flat();
      if (lengths.some((length) => length < 32) && lengths.includes(33) && lengths.includes(32)) return;
    }
    throw new Error('no short DER integer came up in 4000 signatures');
  });

  it('maps KMS throttling to 503 and lets an access denial through as it is', async () => {
    const { kms, signer } = setup();
    kms.failNext = kmsError('ThrottlingException');
    await expect(signer.sign(CLAIMS, 900)).rejects.toBeInstanceOf(ServiceUnavailableError);
    kms.failNext = kmsError('AccessDeniedException');
    await expect(signer.sign(CLAIMS, 900)).rejects.toThrow('AccessDeniedException');
  });

  it('refuses a key ARN that is not one', () => {
    expect(() => keyIdOf('alias/device-tokens')).toThrow(/Not a KMS key ARN/);
    expect(keyIdOf(KEY_ARN)).toBe(KEY_ID);
  });
});

describe('derToJoseSignature', () => {
  it('left-pads short integers, drops sign bytes and rejects what is not a DER ECDSA signature', () => {
    const r = Buffer.alloc(32, 0x11);
    const s = Buffer.concat([Buffer.from([0x00, 0x00]), Buffer.alloc(30, 0x22)]);
    const der = Buffer.concat([Buffer.from([0x30, 2 + 31 + 2 + 33, 0x02, 31]), s.subarray(1), Buffer.from([0x02, 33, 0x00]), r]);
    // r is the 31-byte integer (s's bytes here), s is the 33-byte one.
    expect(derToJoseSignature(der).toString('hex')).toBe(Buffer.concat([Buffer.from([0]), s.subarray(1), r]).toString('hex'));
    expect(() => derToJoseSignature(Buffer.from([0x31, 0x00]))).toThrow(/SEQUENCE/);
    expect(() => derToJoseSignature(Buffer.concat([der, Buffer.from([0])]))).toThrow(/Malformed/);
    const tooLong = Buffer.concat([Buffer.from([0x30, 2 + 34 + 2 + 1, 0x02, 34]), Buffer.alloc(34, 0x7f), Buffer.from([0x02, 1, 1])]);
    expect(() => derToJoseSignature(tooLong)).toThrow(/longer than 32/);
  });
});

describe('KmsDeviceIssuerKeys', () => {
  it('publishes the KMS public key as the JWK node:crypto exports, with the tokens’ kid, fetched once', async () => {
    const { kms, signer, publicJwk } = setup();
    const keys = new KmsDeviceIssuerKeys(kms, KEY_ARN);
    const set = await keys.jwks();
    expect(set).toEqual({ keys: [{ ...publicJwk, kid: KEY_ID, alg: 'ES256', use: 'sig' }] });
    await keys.jwks();
    expect(kms.getPublicKeyCalls).toBe(1);
    // A token verifies against the published set, found by its kid.
    const token = await signer.sign(CLAIMS, 900);
    const published = set.keys.find((key) => key.kid === decodeProtectedHeader(token).kid);
    expect(published).toBeDefined();
    await expect(jwtVerify(token, await importJWK(published as object, 'ES256'), { issuer: ISSUER })).resolves.toBeDefined();
  });

  it('does not remember a failed fetch: 503 on throttling, the next call asks again', async () => {
    const { kms } = setup();
    const keys = new KmsDeviceIssuerKeys(kms, KEY_ARN);
    kms.failNext = kmsError('ThrottlingException');
    await expect(keys.jwks()).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(keys.jwks()).resolves.toHaveProperty('keys');
    expect(kms.getPublicKeyCalls).toBe(2);
  });

  it('refuses a key that is not P-256', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kms: KmsPublicKeyApi = {
      getPublicKey: async () => ({ PublicKey: rsa.publicKey.export({ format: 'der', type: 'spki' }), KeySpec: 'RSA_2048' }),
    };
    await expect(new KmsDeviceIssuerKeys(kms, KEY_ARN).jwks()).rejects.toThrow(/ECC_NIST_P256/);
  });
});

describe('openIdConfiguration', () => {
  it('names the issuer exactly and its key set under it, as the JWT authorizer looks them up', () => {
    expect(openIdConfiguration(ISSUER, 'https://auth.example.test/token')).toMatchObject({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      token_endpoint: 'https://auth.example.test/token',
      grant_types_supported: ['client_credentials'],
    });
  });
});
