import { readFileSync } from 'node:fs';
import { signCode } from '@hallmark/codes';
import { ed25519Jwk, ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { describe, expect, it } from 'vitest';
import { verifyOffline } from './verify-offline.ts';

const doc = readFileSync(new URL('../../../docs/SIGNING.md', import.meta.url), 'utf8');
const documentedLink = /^link:\s+(\S+)$/m.exec(doc)?.[1] ?? '';
const documentedKey = Buffer.from(/^public key \(hex\):\s+(\S+)$/m.exec(doc)?.[1] ?? '', 'hex');

describe('verifyOffline', () => {
  const other = generateEd25519KeyPair();
  const jwks = {
    keys: [
      { ...ed25519Jwk(other.publicKey, ed25519Thumbprint(other.publicKey)), hallmark_environment: 'live' },
      { ...ed25519Jwk(documentedKey, ed25519Thumbprint(documentedKey)), hallmark_environment: 'live' },
    ],
  };

  it('verifies the documented link against a key set, naming the key', () => {
    expect(verifyOffline(documentedLink, jwks)).toEqual({
      valid: true,
      kid: ed25519Thumbprint(documentedKey),
      environment: 'live',
      gtin: '09506000134352',
      serial: 'SN-0001',
      batch: 'LOT42',
      expiry: '271231',
    });
  });

  it('refuses an altered link, a key set without the key, and a link that does not parse', () => {
    expect(verifyOffline(documentedLink.replace('SN-0001', 'SN-0002'), jwks)).toMatchObject({ valid: false });
    expect(verifyOffline(documentedLink, { keys: [jwks.keys[0] as never] })).toMatchObject({
      valid: false,
      reason: expect.stringContaining('1 keys'),
    });
    expect(verifyOffline('hello', jwks)).toMatchObject({ valid: false, reason: expect.stringContaining('URL') });
    expect(verifyOffline(documentedLink, { keys: [] })).toMatchObject({ valid: false });
  });

  it('does not accept one key’s signature made over another kid', () => {
    const pair = generateEd25519KeyPair();
    const signature = signCode(ed25519PrivateKeyObject(pair), { kid: 'someone-else', gtin: '09506000134352', serial: 'A' });
    const link = `https://x.y/01/09506000134352/21/A?sig=${signature}`;
    expect(verifyOffline(link, { keys: [ed25519Jwk(pair.publicKey, ed25519Thumbprint(pair.publicKey))] }).valid).toBe(false);
  });
});
