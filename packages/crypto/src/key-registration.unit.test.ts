import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ed25519PrivateKeyObject, generateEd25519KeyPair, signEd25519 } from './ed25519.ts';
import { keyRegistrationMessage, signKeyRegistration, verifyKeyRegistrationProof } from './key-registration.ts';

// The worked example is read from docs/SIGNING.md, so the document and the code cannot drift apart.
const doc = readFileSync(new URL('../../../docs/SIGNING.md', import.meta.url), 'utf8');
const block = /```text registration vector\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
const vector = Object.fromEntries(
  block
    .split('\n')
    .filter((line) => line.includes(':'))
    .map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
) as Record<string, string>;

const seed = Buffer.from(vector['private key (hex)'] ?? '', 'hex');
const publicKey = Buffer.from(vector['public key'] ?? '', 'base64url');
const vectorKey = ed25519PrivateKeyObject({ publicKey, privateKey: seed });
const registration = { accountId: vector.account ?? '', environment: 'live' as const, publicKey };

describe('the registration proof in docs/SIGNING.md', () => {
  it('has every value', () => {
    for (const name of ['private key (hex)', 'public key', 'account', 'environment', 'message', 'proof']) {
      expect(vector[name], name).toBeTruthy();
    }
    expect(vector.environment).toBe('live');
  });

  it('gives the documented message and proof', () => {
    expect(keyRegistrationMessage(registration.accountId, 'live', publicKey).toString('utf8')).toBe(vector.message);
    expect(signKeyRegistration(vectorKey, registration)).toBe(vector.proof);
    expect(verifyKeyRegistrationProof({ ...registration, proof: vector.proof ?? '' })).toBe(true);
  });
});

describe('keyRegistrationMessage', () => {
  it('is the UTF-8 of the prefix, account, environment and the raw key in base64url, joined by colons, nothing more', () => {
    const pair = generateEd25519KeyPair();
    const message = keyRegistrationMessage('acc_é1', 'test', pair.publicKey);
    expect(
      message.equals(Buffer.from(`hallmark-key-registration:acc_é1:test:${pair.publicKey.toString('base64url')}`, 'utf8')),
    ).toBe(true);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => keyRegistrationMessage('acc_1', 'live', Buffer.alloc(31))).toThrow(RangeError);
  });
});

describe('verifyKeyRegistrationProof', () => {
  const pair = generateEd25519KeyPair();
  const privateKey = ed25519PrivateKeyObject(pair);
  const mine = { accountId: 'acc_brand', environment: 'live' as const, publicKey: pair.publicKey };
  const proof = signKeyRegistration(privateKey, mine);

  it('accepts the key’s own signature for this account and environment', () => {
    expect(proof).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(verifyKeyRegistrationProof({ ...mine, proof })).toBe(true);
  });

  it('refuses it for another account or the other environment', () => {
    expect(verifyKeyRegistrationProof({ ...mine, accountId: 'acc_thief', proof })).toBe(false);
    expect(verifyKeyRegistrationProof({ ...mine, accountId: 'acc_brand:live', proof })).toBe(false);
    expect(verifyKeyRegistrationProof({ ...mine, environment: 'test', proof })).toBe(false);
  });

  it('refuses a proof made by another key, for another key, or over other bytes', () => {
    const other = generateEd25519KeyPair();
    const byOther = signKeyRegistration(ed25519PrivateKeyObject(other), { ...mine, publicKey: other.publicKey });
    expect(verifyKeyRegistrationProof({ ...mine, proof: byOther })).toBe(false);
    // The thief's key signing a registration of the brand's key.
    expect(verifyKeyRegistrationProof({ ...mine, proof: signKeyRegistration(ed25519PrivateKeyObject(other), mine) })).toBe(false);
    // The same text with a line feed at the end is other bytes.
    const text = `${keyRegistrationMessage(mine.accountId, mine.environment, mine.publicKey).toString()}\n`;
    const overText = signEd25519(privateKey, Buffer.from(text, 'utf8')).toString('base64url');
    expect(verifyKeyRegistrationProof({ ...mine, proof: overText })).toBe(false);
  });

  it('refuses what is not 86 base64url characters in their only spelling, without throwing', () => {
    for (const bad of ['', 'A'.repeat(85), 'A'.repeat(87), `${proof.slice(0, 85)}=`, `${proof}==`, `${proof.slice(0, 85)}+`]) {
      expect(verifyKeyRegistrationProof({ ...mine, proof: bad }), bad).toBe(false);
    }
    // The last character carries 4 unused bits: another letter that decodes to the same bytes is refused.
    const last = proof.at(-1) ?? 'A';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const index = alphabet.indexOf(last);
    const sibling = alphabet[(index & ~3) | ((index + 1) & 3)] ?? 'A';
    expect(Buffer.from(`${proof.slice(0, 85)}${sibling}`, 'base64url').equals(Buffer.from(proof, 'base64url'))).toBe(true);
    expect(verifyKeyRegistrationProof({ ...mine, proof: `${proof.slice(0, 85)}${sibling}` })).toBe(false);
    expect(verifyKeyRegistrationProof({ ...mine, publicKey: Buffer.alloc(31), proof })).toBe(false);
  });
});
