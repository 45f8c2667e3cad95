import { readFileSync } from 'node:fs';
import { ed25519PrivateKeyObject, ed25519PublicKeyObject, ed25519Thumbprint } from '@hallmark/crypto';
import { parseDigitalLink } from '@hallmark/gs1';
import { describe, expect, it } from 'vitest';
import {
  signCode,
  signedMessage,
  verifiesOnTheEventLoop,
  verifyCodeSignature,
  verifyCodeSignatureForRequest,
  verifyCodeSignatureInThreadPool,
} from './signed-message.ts';

// The vector is read from docs/SIGNING.md, so the document and the code cannot drift apart.
const doc = readFileSync(new URL('../../../docs/SIGNING.md', import.meta.url), 'utf8');
const block = /```text vector\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
const vector = Object.fromEntries(
  block
    .split('\n')
    .filter((line) => line.includes(':'))
    .map((line) => {
      const at = line.indexOf(':');
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
) as Record<string, string>;

describe('the signing test vector in docs/SIGNING.md', () => {
  const keyPair = {
    privateKey: Buffer.from(vector['private key (hex)'] ?? '', 'hex'),
    publicKey: Buffer.from(vector['public key (hex)'] ?? '', 'hex'),
  };
  const fields = {
    kid: vector.kid ?? '',
    gtin: vector.gtin ?? '',
    serial: vector.serial ?? '',
    batch: vector.batch || undefined,
    variant: vector.variant || undefined,
    expiry: vector.expiry || undefined,
  };

  it('has every value', () => {
    for (const name of ['private key (hex)', 'public key (hex)', 'kid', 'gtin', 'serial', 'message (hex)', 'signature', 'link']) {
      expect(vector[name], name).toBeTruthy();
    }
  });

  it('names the key by its RFC 7638 thumbprint', () => {
    expect(ed25519Thumbprint(keyPair.publicKey)).toBe(vector.kid);
  });

  it('gives the documented message bytes and signature', () => {
    expect(signedMessage(fields).toString('hex')).toBe(vector['message (hex)']);
    expect(signCode(ed25519PrivateKeyObject(keyPair), fields)).toBe(vector.signature);
  });

  it('verifies the documented link in either order, on any host, with sig or 8030, and nothing altered', () => {
    const publicKey = ed25519PublicKeyObject(keyPair.publicKey);
    const signature = vector.signature ?? '';
    const links = [vector.link ?? '', `http://localhost:8080/01/09506000134352/10/LOT42/21/SN-0001?8030=${signature}&17=271231`];
    for (const text of links) {
      const parsed = parseDigitalLink(text);
      if (!parsed.ok) throw new Error(parsed.problem.message);
      const { gtin, serial = '', batch, variant, expiry } = parsed.link;
      expect(
        verifyCodeSignature(publicKey, { kid: fields.kid, gtin, serial, batch, variant, expiry }, parsed.link.signature ?? ''),
      ).toBe(true);
    }
    expect(verifyCodeSignature(publicKey, { ...fields, serial: 'SN-0002' }, signature)).toBe(false);
    expect(verifyCodeSignature(publicKey, { ...fields, expiry: '291231' }, signature)).toBe(false);
    expect(verifyCodeSignature(publicKey, { ...fields, kid: 'another-key' }, signature)).toBe(false);
    expect(verifyCodeSignature(publicKey, fields, `${signature.slice(0, -1)}A`)).toBe(false);
    expect(verifyCodeSignature(publicKey, fields, signature.slice(0, 40))).toBe(false);
  });

  it('gives the same answers in the thread pool as on the calling thread', async () => {
    const publicKey = ed25519PublicKeyObject(keyPair.publicKey);
    const signature = vector.signature ?? '';
    const cases: Array<[typeof fields, string]> = [
      [fields, signature],
      [{ ...fields, serial: 'SN-0002' }, signature],
      [fields, `${signature.slice(0, -1)}A`],
      [fields, signature.slice(0, 40)],
    ];
    const answers = await Promise.all(cases.map(([signed, text]) => verifyCodeSignatureInThreadPool(publicKey, signed, text)));
    expect(answers).toEqual([true, false, false, false]);
    expect(answers).toEqual(cases.map(([signed, text]) => verifyCodeSignature(publicKey, signed, text)));
    const forRequests = await Promise.all(cases.map(([signed, text]) => verifyCodeSignatureForRequest(publicKey, signed, text)));
    expect(forRequests).toEqual(answers);
  });

  it('verifies a request on the event loop with two cores or fewer, in the thread pool with more', () => {
    expect([1, 2, 3, 4, 16].map(verifiesOnTheEventLoop)).toEqual([true, true, false, false, false]);
  });
});
