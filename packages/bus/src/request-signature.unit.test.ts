import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRequestSigner, parseBusSecret } from './request-signature.ts';

const secret = randomBytes(32);
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const request = (principal = { accountId: 'acc_a', environment: 'live' }) => ({
  subject: 'hallmark.rpc.code-service.generateCode',
  requestId: 'req-1',
  data: encode({ principal, body: { gtin: '09506000134352', serialNumber: 'SN-1' } }),
});

describe('request signatures on the bus', () => {
  it('accept a request signed with the same secret', () => {
    const signer = createRequestSigner(secret);
    expect(signer.verify(signer.sign(request()), request())).toEqual({ ok: true });
  });

  it('accept text as its UTF-8 bytes (the in-process bus signs the JSON text)', () => {
    const signer = createRequestSigner(secret);
    const text = JSON.stringify({ name: 'Maison Élise' });
    const signature = signer.sign({ subject: 's', requestId: 'r', data: text });
    expect(signer.verify(signature, { subject: 's', requestId: 'r', data: new TextEncoder().encode(text) })).toEqual({
      ok: true,
    });
  });

  it('refuse a request without a signature', () => {
    const signer = createRequestSigner(secret);
    expect(signer.verify(undefined, request())).toEqual({ ok: false, reason: 'missing' });
    expect(signer.verify('', request())).toEqual({ ok: false, reason: 'missing' });
  });

  it('refuse a signature made with another secret', () => {
    const other = createRequestSigner(randomBytes(32));
    expect(createRequestSigner(secret).verify(other.sign(request()), request())).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuse a signed request whose principal was changed', () => {
    const signer = createRequestSigner(secret);
    const signature = signer.sign(request());
    const changed = request({ accountId: 'acc_victim', environment: 'live' });
    expect(signer.verify(signature, changed)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuse a signature moved to another subject or request id', () => {
    const signer = createRequestSigner(secret);
    const signature = signer.sign(request());
    expect(signer.verify(signature, { ...request(), subject: 'hallmark.rpc.code-service.rotateSigningKey' })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(signer.verify(signature, { ...request(), requestId: 'req-2' })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuse a signature whose timestamp was changed (a replay made to look fresh)', () => {
    let now = 1_000_000;
    const signer = createRequestSigner(secret, { now: () => now });
    const [version, , mac] = signer.sign(request()).split('.');
    now += 60_000;
    expect(signer.verify(`${version}.${now}.${mac}`, request())).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuse a request older than the window, and one dated beyond it in the future; accept one inside it', () => {
    let now = 1_000_000;
    const signer = createRequestSigner(secret, { now: () => now, maxAgeMs: 30_000 });
    const signature = signer.sign(request());
    now += 30_000;
    expect(signer.verify(signature, request())).toEqual({ ok: true });
    now += 1;
    expect(signer.verify(signature, request())).toEqual({ ok: false, reason: 'expired' });
    now = 1_000_000 - 30_001;
    expect(signer.verify(signature, request())).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse malformed signatures without throwing', () => {
    const signer = createRequestSigner(secret);
    const [, timestamp, mac] = signer.sign(request()).split('.');
    for (const bad of [
      'x',
      `2.${timestamp}.${mac}`,
      `1.abc.${mac}`,
      `1.${timestamp}.`,
      `1.${timestamp}.AAAA`,
      `1.${timestamp}.${mac}.x`,
    ]) {
      expect(signer.verify(bad, request())).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('costs a few microseconds per signature and check', () => {
    const signer = createRequestSigner(secret);
    const sample = request();
    // The fastest of 20 runs of 200: a run preempted by the other test workers on a shared machine
    // (one of 2,000 in a row took 140 µs each in CI) says nothing of the cost. About 5 µs here.
    const rounds = 200;
    let fastest = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 20; run++) {
      const started = performance.now();
      for (let i = 0; i < rounds; i++) signer.verify(signer.sign(sample), sample);
      fastest = Math.min(fastest, ((performance.now() - started) * 1_000) / rounds);
    }
    expect(fastest).toBeLessThan(100);
  });
});

describe('broadcast signatures on the bus', () => {
  const blocked = (serial: string) => ({
    subject: 'hallmark.codes.code-blocked',
    data: encode({ reportId: 'rep_1', environment: 'live', gtin: '09506000134352', serial, ownerAccountId: 'acc_a' }),
  });

  it('accept a broadcast signed with the same secret, within the window', () => {
    let clock = 1_800_000_000_000;
    const signer = createRequestSigner(secret, { now: () => clock });
    const signature = signer.signBroadcast(blocked('SN-1'));
    clock += 29_000;
    expect(signer.verifyBroadcast(signature, blocked('SN-1'))).toEqual({ ok: true });
  });

  it('refuse one made up, moved to another subject, carrying other bytes or made with another secret', () => {
    const signer = createRequestSigner(secret);
    const signature = signer.signBroadcast(blocked('SN-1'));
    expect(signer.verifyBroadcast(undefined, blocked('SN-1'))).toEqual({ ok: false, reason: 'missing' });
    expect(signer.verifyBroadcast(signature, { ...blocked('SN-1'), subject: 'hallmark.codes.code-block-lifted' })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(signer.verifyBroadcast(signature, blocked('SN-2'))).toEqual({ ok: false, reason: 'mismatch' });
    const other = createRequestSigner(randomBytes(32));
    expect(signer.verifyBroadcast(other.signBroadcast(blocked('SN-1')), blocked('SN-1'))).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('refuse a request’s signature as a broadcast’s, and a broadcast’s as a request’s, on the same subject and bytes', () => {
    const signer = createRequestSigner(secret);
    const { subject, data } = blocked('SN-1');
    expect(signer.verifyBroadcast(signer.sign({ subject, requestId: '', data }), { subject, data })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(signer.verify(signer.signBroadcast({ subject, data }), { subject, requestId: '', data })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('refuse a copy replayed after the window, and malformed signatures without throwing', () => {
    let clock = 1_800_000_000_000;
    const signer = createRequestSigner(secret, { now: () => clock });
    const signature = signer.signBroadcast(blocked('SN-1'));
    clock += 30_001;
    expect(signer.verifyBroadcast(signature, blocked('SN-1'))).toEqual({ ok: false, reason: 'expired' });
    for (const malformed of ['1', '1.x.y', `2.${clock}.${signature.split('.')[2]}`, `1.${clock}.short`]) {
      expect(signer.verifyBroadcast(malformed, blocked('SN-1'))).toEqual({ ok: false, reason: 'malformed' });
    }
  });
});

describe('the bus secret setting', () => {
  it('reads 64 hex characters or base64 of 32 bytes', () => {
    const bytes = randomBytes(32);
    expect(parseBusSecret(bytes.toString('hex'))).toEqual(bytes);
    expect(parseBusSecret(bytes.toString('base64'))).toEqual(bytes);
  });

  it('refuses anything that is not 32 bytes', () => {
    expect(() => parseBusSecret('abcd')).toThrow(RangeError);
    expect(() => parseBusSecret(randomBytes(16).toString('hex'))).toThrow(RangeError);
    expect(() => createRequestSigner(randomBytes(16))).toThrow(RangeError);
  });
});
