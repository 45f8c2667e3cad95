import { ed25519PrivateKeyObject, ed25519PublicKeyObject, generateEd25519KeyPair, signEd25519 } from '@hallmark/crypto';
import { describe, expect, it } from 'vitest';
import {
  type ChainedRecord,
  canonicalJson,
  chainEvents,
  chainedRecordOf,
  hashProvenanceRecord,
  noteKeyHash,
  openSignedCheckpoint,
  signCheckpoint,
  verifyChain,
} from './index.ts';

describe('canonicalJson (RFC 8785)', () => {
  it('matches the RFC’s example of numbers, strings and literals', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts members by UTF-16 code units, as the RFC’s sorting example', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the member order from the text: JSON.parse would put the integer-like key "1" first.
    const keys = [...canonicalJson(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((match) => JSON.parse(`"${match[1]}"`));
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson('\ud800')).toThrow(TypeError);
    expect(canonicalJson({ a: undefined, b: -0 })).toBe('{"b":0}');
  });
});

describe('hash chain', () => {
  const asset = { assetId: 'code_1', owner: { accountId: 'acc_1', environment: 'live' as const } };
  const records = (): ChainedRecord[] =>
    chainEvents(
      asset,
      undefined,
      [
        { type: 'registered', data: { title: 'Submariner' } },
        { type: 'cataloged', data: { lot: 7 } },
        { type: 'listed', data: {} },
      ],
      '2026-11-21T10:00:00.000Z',
    ).records;

  it('links each event to the previous one and verifies', () => {
    const chain = records();
    expect(chain.map((record) => record.sequence)).toEqual([1, 2, 3]);
    expect(chain[0]?.prevHash).toBeNull();
    expect(chain[1]?.prevHash).toBe(chain[0]?.hash);
    expect(verifyChain(chain)).toEqual({ isValid: true, eventCount: 3, headHash: chain[2]?.hash });
  });

  it('points at an altered event, a removed one and a reordered pair', () => {
    const altered = records();
    (altered[1] as ChainedRecord).data = { lot: 8 };
    expect(verifyChain(altered)).toMatchObject({
      isValid: false,
      eventCount: 3,
      brokenAt: { reason: 'HASH_MISMATCH', sequence: 2 },
    });

    const removed = records();
    removed.splice(1, 1);
    expect(verifyChain(removed).brokenAt).toMatchObject({ reason: 'SEQUENCE_GAP', sequence: 3, expected: 2 });

    const rehashed = records();
    const second = rehashed[1] as ChainedRecord;
    second.data = { lot: 9 };
    // A forger who also rewrites the hash breaks the next event's link instead.
    second.hash =
      chainEvents(asset, rehashed[0], [{ type: second.type, data: second.data }], second.occurredAt).records[0]?.hash ?? '';
    expect(verifyChain(rehashed).brokenAt).toMatchObject({ reason: 'PREV_HASH_MISMATCH', sequence: 3 });
  });

  it('refuses a chain whose events name another asset, account or environment than the first', () => {
    for (const change of [{ assetId: 'obj_other' }, { accountId: 'acc_other' }, { environment: 'test' as const }]) {
      const chain = records();
      const moved = { ...(chain[1] as ChainedRecord), ...change };
      // Consistent on its own: rehashed, and the next event linked to it.
      moved.hash = hashProvenanceRecord(moved);
      const next = { ...(chain[2] as ChainedRecord), ...change, prevHash: moved.hash };
      next.hash = hashProvenanceRecord(next);
      expect(verifyChain([chain[0] as ChainedRecord, moved, next]).brokenAt, JSON.stringify(change)).toMatchObject({
        reason: 'OWNER_MISMATCH',
        sequence: 2,
      });
    }
  });

  it('carries the chain in stored events and reads it back', () => {
    const { events, records: chained } = chainEvents(
      asset,
      undefined,
      [{ type: 'registered', data: { a: 1 } }],
      '2026-11-21T10:00:00.000Z',
    );
    const stored = {
      ...events[0],
      eventId: 'e',
      streamId: 'asset-code_1',
      streamVersion: 1,
      globalPosition: 1,
      recordedAt: '',
    } as never;
    expect(chainedRecordOf(stored)).toEqual(chained[0]);
  });
});

describe('signed checkpoints (C2SP signed note)', () => {
  const pair = generateEd25519KeyPair();
  const privateKey = ed25519PrivateKeyObject(pair);
  const signer = {
    name: 'hallmark/keys/kid1',
    publicKey: pair.publicKey,
    sign: (message: Uint8Array) => signEd25519(privateKey, message),
  };
  const key = { name: signer.name, publicKey: pair.publicKey, keyObject: ed25519PublicKeyObject(pair.publicKey) };
  const rootHash = Buffer.alloc(32, 7);

  it('signs origin, size and root, and opens only with the right key', () => {
    const note = signCheckpoint({ origin: 'hallmark/assets/code_1', treeSize: 2 ** 40 + 3, rootHash }, signer);
    expect(note).toMatch(
      /^hallmark\/assets\/code_1\n1099511627779\nBwcH[^\n]+=\n\n\u2014 hallmark\/keys\/kid1 [A-Za-z0-9+/=]+\n$/,
    );
    const opened = openSignedCheckpoint(note, (name) => (name === key.name ? key : undefined));
    expect(opened).toEqual({
      ok: true,
      signedBy: key.name,
      checkpoint: { origin: 'hallmark/assets/code_1', treeSize: 2 ** 40 + 3, rootHash },
    });
    expect(openSignedCheckpoint(note, () => undefined)).toMatchObject({ ok: false });
    const other = generateEd25519KeyPair();
    expect(
      openSignedCheckpoint(note, () => ({
        ...key,
        publicKey: other.publicKey,
        keyObject: ed25519PublicKeyObject(other.publicKey),
      })),
    ).toMatchObject({ ok: false });
  });

  it('signs the time it was signed as an extension line, and refuses a changed, doubled or unreadable one', () => {
    const signedAt = new Date('2026-12-04T12:00:00.123Z');
    const note = signCheckpoint({ origin: 'o', treeSize: 5, rootHash, signedAt }, signer);
    expect(note.split('\n\n')[0]).toBe(`o\n5\n${rootHash.toString('base64')}\nhallmark-signed-at 2026-12-04T12:00:00.123Z`);
    expect(openSignedCheckpoint(note, () => key)).toEqual({
      ok: true,
      signedBy: key.name,
      checkpoint: { origin: 'o', treeSize: 5, rootHash, signedAt },
    });
    // An older export cut short cannot be made to look recent: the time is under the signature.
    expect(openSignedCheckpoint(note.replace('2026-12-04T12', '2027-01-01T12'), () => key)).toMatchObject({ ok: false });
    // Signed, but not one time: malformed, not read.
    const resign = (body: string) => {
      const signature = Buffer.concat([noteKeyHash(signer.name, signer.publicKey), signer.sign(Buffer.from(body))]);
      return `${body}\n\u2014 ${signer.name} ${signature.toString('base64')}\n`;
    };
    const base = `o\n5\n${rootHash.toString('base64')}\n`;
    for (const extension of [
      'hallmark-signed-at 2026-12-04T12:00:00.123Z\nhallmark-signed-at 2026-12-05T12:00:00.123Z\n',
      'hallmark-signed-at 2026-02-31T12:00:00.000Z\n',
      'hallmark-signed-at yesterday\n',
    ]) {
      expect(
        openSignedCheckpoint(resign(base + extension), () => key),
        extension,
      ).toEqual({
        ok: false,
        reason: 'The checkpoint text is malformed.',
      });
    }
    // Another extension line is not ours to read; a checkpoint without a time (signed before it had one) still opens.
    expect(openSignedCheckpoint(resign(`${base}other-extension 1\n`), () => key)).toMatchObject({ ok: true });
    expect(openSignedCheckpoint(resign(base), () => key)).toEqual({
      ok: true,
      signedBy: key.name,
      checkpoint: { origin: 'o', treeSize: 5, rootHash },
    });
  });

  it('refuses a checkpoint whose size or root was changed after signing', () => {
    const note = signCheckpoint({ origin: 'o', treeSize: 5, rootHash }, signer);
    expect(openSignedCheckpoint(note.replace('\n5\n', '\n6\n'), () => key)).toEqual({
      ok: false,
      reason: `The signature by ${key.name} does not verify.`,
    });
  });
});
