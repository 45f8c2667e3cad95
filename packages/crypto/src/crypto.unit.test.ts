import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ed25519PrivateKeyObject,
  ed25519PublicKeyObject,
  ed25519Thumbprint,
  generateEd25519KeyPair,
  open,
  parseEd25519PublicKey,
  parseMasterKey,
  seal,
  signEd25519,
  signEd25519InThreadPool,
  uuidV7,
  verifyEd25519,
  verifyEd25519InThreadPool,
} from './index.ts';

// RFC 8032 §7.1, TEST 1 and TEST 2.
const rfc8032 = [
  {
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
];

describe('Ed25519', () => {
  it.each(rfc8032)('signs and verifies RFC 8032 vector with public key $public', (vector) => {
    const keyPair = { publicKey: Buffer.from(vector.public, 'hex'), privateKey: Buffer.from(vector.secret, 'hex') };
    const message = Buffer.from(vector.message, 'hex');
    const signature = signEd25519(ed25519PrivateKeyObject(keyPair), message);
    expect(signature.toString('hex')).toBe(vector.signature);
    expect(verifyEd25519(ed25519PublicKeyObject(keyPair.publicKey), message, signature)).toBe(true);
  });

  it('refuses an altered message, an altered signature and a short signature', () => {
    const keyPair = generateEd25519KeyPair();
    const publicKey = ed25519PublicKeyObject(keyPair.publicKey);
    const signature = signEd25519(ed25519PrivateKeyObject(keyPair), Buffer.from('hello'));
    expect(verifyEd25519(publicKey, Buffer.from('hello'), signature)).toBe(true);
    expect(verifyEd25519(publicKey, Buffer.from('hellp'), signature)).toBe(false);
    const altered = Buffer.from(signature);
    altered[10] = (altered[10] ?? 0) ^ 1;
    expect(verifyEd25519(publicKey, Buffer.from('hello'), altered)).toBe(false);
    expect(verifyEd25519(publicKey, Buffer.from('hello'), signature.subarray(0, 63))).toBe(false);
  });
});

describe('ed25519Thumbprint', () => {
  it('matches RFC 8037 appendix A.3', () => {
    const x = Buffer.from('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', 'base64url');
    expect(ed25519Thumbprint(x)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });
});

describe('parseEd25519PublicKey', () => {
  const keyPair = generateEd25519KeyPair();
  const raw = keyPair.publicKey.toString('base64url');

  it('reads base64url raw bytes and PEM, to the same key', () => {
    const pem = ed25519PublicKeyObject(keyPair.publicKey).export({ format: 'pem', type: 'spki' }).toString();
    expect(parseEd25519PublicKey(raw)).toEqual({ ok: true, publicKey: keyPair.publicKey });
    expect(parseEd25519PublicKey(pem)).toEqual({ ok: true, publicKey: keyPair.publicKey });
  });

  it.each([
    ['too short', raw.slice(0, 40)],
    ['padding', `${raw}=`],
    ['standard base64', raw.replace(/[-_]/g, '+').padEnd(43, '+').slice(0, 42) + '/'],
    ['hex', keyPair.publicKey.toString('hex')],
    ['a private key PEM', '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ\n-----END PRIVATE KEY-----'],
    [
      'an RSA key',
      generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    ],
    ['garbage PEM', '-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----'],
  ])('refuses %s with a reason', (_, input) => {
    const result = parseEd25519PublicKey(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason.length).toBeGreaterThan(10);
  });
});

describe('seal and open', () => {
  const key = parseMasterKey('00'.repeat(32));

  it('round-trips, and fails under another key, another context, or a changed byte', () => {
    const box = seal(key, Buffer.from('private seed'), 'kid-1');
    expect(open(key, box, 'kid-1').toString()).toBe('private seed');
    expect(() => open(parseMasterKey('11'.repeat(32)), box, 'kid-1')).toThrow();
    expect(() => open(key, box, 'kid-2')).toThrow();
    const altered = Buffer.from(box);
    altered[altered.length - 1] = (altered[altered.length - 1] ?? 0) ^ 1;
    expect(() => open(key, altered, 'kid-1')).toThrow();
  });

  it('reads a master key as hex or base64 of 32 bytes, nothing else', () => {
    expect(parseMasterKey(Buffer.alloc(32, 7).toString('base64'))).toEqual(Buffer.alloc(32, 7));
    expect(() => parseMasterKey('abcd')).toThrow(/32 bytes/);
  });

  it('signs and verifies in the thread pool as on the calling thread', async () => {
    const pair = generateEd25519KeyPair();
    const privateKey = ed25519PrivateKeyObject(pair);
    const publicKey = ed25519PublicKeyObject(pair.publicKey);
    const message = Buffer.from('hallmark');
    const signature = await signEd25519InThreadPool(privateKey, message);
    expect(signature).toEqual(signEd25519(privateKey, message));
    expect(await verifyEd25519InThreadPool(publicKey, message, signature)).toBe(true);
    expect(await verifyEd25519InThreadPool(publicKey, Buffer.from('hallmarc'), signature)).toBe(false);
    expect(await verifyEd25519InThreadPool(publicKey, message, signature.subarray(0, 63))).toBe(false);
  });

  it('makes RFC 9562 version 7 UUIDs that carry their millisecond and sort by it', () => {
    const atMs = Date.UTC(2026, 10, 21, 12, 0, 0, 5);
    const id = uuidV7(atMs);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(atMs);
    const later = Array.from({ length: 100 }, (_, i) => uuidV7(atMs + 1 + i));
    expect([...later].sort()).toEqual(later);
    expect(later.every((next) => next > id)).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => uuidV7(atMs))).size).toBe(1000);
  });

  it('makes the UUIDv7s of one millisecond in increasing order, each with its time, version and variant', () => {
    const atMs = Date.UTC(2026, 10, 29, 6, 0, 0, 7);
    const ids = Array.from({ length: 20_000 }, () => uuidV7(atMs));
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Number.parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(atMs);
    }
    expect(ids.every((id, index) => index === 0 || id > (ids[index - 1] as string))).toBe(true);
    // The next millisecond's ids come after all of them; an earlier one's (a clock set back) carry their own time.
    expect(uuidV7(atMs + 1) > (ids.at(-1) as string)).toBe(true);
    const earlier = uuidV7(atMs - 60_000);
    expect(Number.parseInt(earlier.replace('-', '').slice(0, 12), 16)).toBe(atMs - 60_000);
    // Not a counter from zero: each run of a millisecond starts its counter (the digits before the
    // last 8, which are random) at a random value.
    const first = uuidV7(atMs + 5);
    uuidV7(atMs + 6);
    expect(uuidV7(atMs + 5).slice(0, -8)).not.toBe(first.slice(0, -8));
  });
});
