import { readFileSync } from 'node:fs';
import { signCode } from '@hallmark/codes';
import { ed25519Jwk, ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { describe, expect, it } from 'vitest';
import { type PublishedKey, verifyOffline } from './verify-offline.ts';

const doc = readFileSync(new URL('../../../docs/SIGNING.md', import.meta.url), 'utf8');
const documentedLink = /^link:\s+(\S+)$/m.exec(doc)?.[1] ?? '';
const documentedKey = Buffer.from(/^public key \(hex\):\s+(\S+)$/m.exec(doc)?.[1] ?? '', 'hex');
const documentedKid = ed25519Thumbprint(documentedKey);

/** A published key of an account with its claims, as /.well-known/jwks.json lists it. */
const published = (
  publicKey: Buffer,
  account: string,
  claims: { gtins?: string[]; prefixes?: string[]; operator?: boolean } = {},
): PublishedKey => ({
  ...ed25519Jwk(publicKey, ed25519Thumbprint(publicKey)),
  hallmark_environment: 'live',
  hallmark_account: account,
  hallmark_gtins: claims.gtins ?? [],
  hallmark_gtin_prefixes: claims.prefixes ?? [],
  ...(claims.operator ? { hallmark_signs_unowned: true } : {}),
});

describe('verifyOffline', () => {
  const other = generateEd25519KeyPair();
  const jwks = {
    keys: [
      published(other.publicKey, 'acc_other', { prefixes: ['4006381'] }),
      published(documentedKey, 'acc_brand', { prefixes: ['9506000'] }),
    ],
  };

  it('verifies the documented link under the key of the account that owns its GTIN, naming key and account', () => {
    expect(verifyOffline(documentedLink, jwks)).toEqual({
      valid: true,
      kid: documentedKid,
      account: 'acc_brand',
      environment: 'live',
      gtin: '09506000134352',
      serial: 'SN-0001',
      batch: 'LOT42',
      expiry: '271231',
    });
  });

  it('refuses a genuine signature by a key whose account does not own the GTIN, saying whose it is', () => {
    const stolenGtin = {
      keys: [published(documentedKey, 'acc_counterfeiter', { prefixes: ['4006381'] }), jwks.keys[0] as PublishedKey],
    };
    expect(verifyOffline(documentedLink, stolenGtin)).toMatchObject({
      valid: false,
      reason: expect.stringContaining(
        `key ${documentedKid} of account acc_counterfeiter, which may not sign GTIN 09506000134352`,
      ),
    });
    // When another account owns the GTIN, its signature is the only one that counts.
    const ownedByOther = {
      keys: [
        published(documentedKey, 'acc_counterfeiter'),
        published(other.publicKey, 'acc_owner', { gtins: ['09506000134352'] }),
      ],
    };
    expect(verifyOffline(documentedLink, ownedByOther)).toMatchObject({
      valid: false,
      reason: expect.stringContaining('owned by account acc_owner'),
    });
  });

  it('accepts the operator’s key only for a GTIN no account owns', () => {
    const operatorSigned = { keys: [published(documentedKey, 'acc_operator', { operator: true })] };
    expect(verifyOffline(documentedLink, operatorSigned)).toMatchObject({ valid: true, account: 'acc_operator' });
    const nowOwned = {
      keys: [
        published(documentedKey, 'acc_operator', { operator: true }),
        published(other.publicKey, 'acc_brand', { prefixes: ['95060'] }),
      ],
    };
    expect(verifyOffline(documentedLink, nowOwned)).toMatchObject({ valid: false });
  });

  it('fails closed on a key set that does not say whose keys are whose', () => {
    const anonymous = { keys: [{ ...ed25519Jwk(documentedKey, documentedKid), hallmark_environment: 'live' }] };
    expect(verifyOffline(documentedLink, anonymous)).toMatchObject({
      valid: false,
      reason: expect.stringContaining('hallmark_account'),
    });
  });

  it('refuses an altered link, a key set without the key, and a link that does not parse', () => {
    expect(verifyOffline(documentedLink.replace('SN-0001', 'SN-0002'), jwks)).toMatchObject({ valid: false });
    expect(
      verifyOffline(documentedLink, { keys: [published(other.publicKey, 'acc_brand', { prefixes: ['9506000'] })] }),
    ).toMatchObject({ valid: false, reason: expect.stringContaining('1 keys bound') });
    expect(verifyOffline('hello', jwks)).toMatchObject({ valid: false, reason: expect.stringContaining('URL') });
    expect(verifyOffline(documentedLink, { keys: [] })).toMatchObject({ valid: false });
  });

  it('does not accept one key’s signature made over another kid', () => {
    const pair = generateEd25519KeyPair();
    const signature = signCode(ed25519PrivateKeyObject(pair), { kid: 'someone-else', gtin: '09506000134352', serial: 'A' });
    const link = `https://x.y/01/09506000134352/21/A?sig=${signature}`;
    expect(verifyOffline(link, { keys: [published(pair.publicKey, 'acc_brand', { gtins: ['09506000134352'] })] }).valid).toBe(
      false,
    );
  });
  it('refuses a genuine code whose expiry date (AI 17) has passed, read as online reads it', () => {
    const brand = generateEd25519KeyPair();
    const kid = ed25519Thumbprint(brand.publicKey);
    const keys = { keys: [published(brand.publicKey, 'acc_brand', { prefixes: ['9506000'] })] };
    const dated = (expiry: string) =>
      `https://brand.example/01/09506000134352/21/D-1?17=${expiry}&sig=${signCode(ed25519PrivateKeyObject(brand), {
        kid,
        gtin: '09506000134352',
        serial: 'D-1',
        expiry,
      })}`;
    // Valid through the last second of 31 January 2027 (UTC), not after.
    expect(verifyOffline(dated('270131'), keys, { now: new Date('2027-01-31T23:59:59Z') })).toMatchObject({ valid: true });
    const expired = verifyOffline(dated('270131'), keys, { now: new Date('2027-02-01T00:00:00Z') });
    expect(expired).toEqual({ valid: false, reason: expect.stringContaining('expired on 2027-01-31') });
    expect(expired.valid === false && expired.reason).toContain(`its signature is genuine (key ${kid}`);
    // Day 00 is the month's last day; 99 is 1999 in 2026 (GS1's rule) and 2099 in 2060.
    expect(verifyOffline(dated('270200'), keys, { now: new Date('2027-02-28T12:00:00Z') })).toMatchObject({ valid: true });
    expect(verifyOffline(dated('270200'), keys, { now: new Date('2027-03-01T00:00:00Z') })).toMatchObject({ valid: false });
    expect(verifyOffline(dated('991231'), keys, { now: new Date('2026-12-04T00:00:00Z') })).toMatchObject({ valid: false });
    expect(verifyOffline(dated('991231'), keys, { now: new Date('2060-01-01T00:00:00Z') })).toMatchObject({ valid: true });
  });
  it('takes no key for a GTIN whose owner has none in the set, not even the operator’s', () => {
    const operator = generateEd25519KeyPair();
    const operatorKid = ed25519Thumbprint(operator.publicKey);
    const link = `https://x.example/01/08712345678906/21/OP-2?sig=${signCode(ed25519PrivateKeyObject(operator), {
      kid: operatorKid,
      gtin: '08712345678906',
      serial: 'OP-2',
    })}`;
    const keys = [published(operator.publicKey, 'acc_operator', { operator: true })];
    // Nobody owns it: the operator's code is genuine.
    expect(verifyOffline(link, { keys })).toMatchObject({ valid: true, account: 'acc_operator' });
    const owner = { hallmark_account: 'acc_new', hallmark_gtins: ['08712345678906'], hallmark_gtin_prefixes: [] };
    const owned = verifyOffline(link, { keys, hallmark_owners_without_keys: [{ ...owner, hallmark_environment: 'live' }] });
    expect(owned).toEqual({
      valid: false,
      reason: `The signature is by key ${operatorKid} of account acc_operator, which may not sign GTIN 08712345678906 (it is owned by account acc_new).`,
    });
    // An owner in the test environment only leaves a live verification as it was.
    const inTest = { keys, hallmark_owners_without_keys: [{ ...owner, hallmark_environment: 'test' }] };
    expect(verifyOffline(link, inTest)).toMatchObject({ valid: true });
    expect(
      verifyOffline(`https://x.example/01/08712345678906/21/X?sig=${'a'.repeat(86)}`, {
        keys,
        hallmark_owners_without_keys: [{ ...owner, hallmark_environment: 'live' }],
      }),
    ).toEqual({
      valid: false,
      reason: 'GTIN 08712345678906 is owned by account acc_new, which has no live key in the set: no code of it is genuine.',
    });
  });
});
