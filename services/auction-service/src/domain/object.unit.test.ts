// The object decider (domain/object.ts) against the rules of docs/AUCTION.md, in given/when/then
// form: no HTTP, no database. Each rule the document states, and the test(s) that hold it:
//
// Registration
//   R1 categories are watch, painting, bottle; anything else is VALIDATION_ERROR naming them
//        -> 'registers each category …', 'refuses another category, naming the three'
//   R2 estimated_value.min must not exceed max (handler rule, interface spec)
//        -> 'refuses estimated_value with min above max', 'takes min equal to max'
//   R3 a registered object is consigned; `registered` carries serial, title, category, owner, link
//        -> 'records registered with serial, title, category, owner and link; status consigned'
//   R4 an object is registered once (the decider's guard; ids come from the CSPRNG)
//        -> 'refuses to register an object twice'
// Photos
//   P1 only the category's angles (VALIDATION_ERROR naming them)
//        -> 'takes each angle its category requires', 'refuses an angle of another category'
//   P2 only real images: what the decoder refused is VALIDATION_ERROR with its reason
//        -> 'refuses a photo the decoder refused, with its reason'
//   P3 one picture, one angle: at most 10 of 64 bits from the photo bound at another angle is a
//      409 CONFLICT with details { angle, similarTo, distance, threshold }; 11 bits apart is another picture
//        -> 'refuses the picture bound at another angle …', 'takes a photo 11 bits away', 'names the closest …'
//   P4 only photos currently bound at other angles count: not the angle's own photo (replaced),
//      not a photo an angle had before
//        -> 'the same picture again at its own angle replaces it', 'a picture no longer bound …'
//   P5 a new upload for an angle replaces it (replaced: true, the earlier SHA-256 in the event)
//        -> 'records photographed with sha256, hash and figures', 'the same picture again …'
//   P6 photo_status: count of required angles bound, required, pending until every angle is bound,
//      then valid; security_tier basic / standard / enhanced (entropy >= 128 with every angle)
//        -> 'photo_status is pending until every required angle is bound, then valid', 'security tier …'
//   P7 an owner's photos (every one bound, replaced ones included) stay within its limit in the
//      environment: beyond, 413 PAYLOAD_TOO_LARGE with details { limit: 'photo-storage', usedBytes,
//      limitBytes, size }; the object counts every photo's bytes (photoBytes)
//        -> 'refuses a photo the owner has no room for …', 'counts every photo bound, replaced ones too'
//   P8 with an Idempotency-Key the binding's event id is given: a retry whose binding is stored
//      records nothing -> 'a retry of a stored binding …'
// Provenance events and states
//   E1 types a client records: cataloged, photographed, authenticated, condition_report, exhibited,
//      listed, withdrawn -> 'records each client type'
//   E2 registered, sold, transferred and unknown types are VALIDATION_ERROR
//        -> 'refuses registered, sold and transferred, naming where they are recorded', 'refuses an unknown type'
//   E3 types in the compliance config's evidenceRequiredFor need non-empty evidence
//        -> 'refuses a type the config lists without evidence', '… with evidence', 'a type the config does not list …'
//   E3b evidence is at most maxEvidenceBytes (16 KiB) as UTF-8 JSON: a fat history would make every
//       public verification and export slow -> 'refuses evidence over 16 KiB as UTF-8 JSON, takes it at the limit'
//   E4 the states table (consigned/listed/sold × listed/withdrawn/other/confirmed transfer); a
//      refused move is 409 CONFLICT with details { status, eventType }
//        -> describe('the states table')
//   E5 a binding photographed and a note photographed are one type: only a binding binds
//        -> 'a photographed note binds no photo'
//   E6 with an Idempotency-Key the event's id is given: the event carries it, and a retry whose event
//      is stored records nothing, whatever the rules say now
//        -> describe('an Idempotency-Key')
//   E7 an unknown object is NOT_FOUND -> 'refuses every command on an object that does not exist'
//   E8 a history holds at most maxObjectEvents (1,000) events: beyond, a client event or a photo is a
//      409 CONFLICT with details { limit, eventCount }; a retry of a stored event is still answered,
//      and transfers still go through (a wrong code, kept private, is not an event of the history)
//        -> describe('a full history')
//   E9 evolve is linear over a history and leaves the state it was given as it was
//        -> describe('folding a long history')
// Transfers (how a confirmed transfer moves the status; the transfer rules are in transfer.unit.test.ts)
//   T1 a confirmed transfer -> sold, from consigned and from listed; sold stays sold on resale, and the
//      owner is the buyer -> 'the states table' (confirmed transfer column)

import { categoryAngles } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { securityFigures } from '../object-history.ts';
import type { PhotoAnalysis, PhotoCheck } from '../photo-analysis.ts';
import {
  type AuctionEvent,
  type DomainError,
  decide,
  evolve,
  initialObjectFacts,
  isRefusal,
  maxEvidenceBytes,
  maxObjectEvents,
  type NoteData,
  type ObjectCommand,
  type ObjectEvent,
  type ObjectFacts,
} from './object.ts';

const link = {
  url: 'https://r.example/01/02000000000017/21/HM-X/10/watch?sig=s',
  gtin: '02000000000017',
  kid: 'k1',
  signature: 's',
};

const registered = (category: 'watch' | 'painting' | 'bottle' = 'watch', ownerId = 'jane'): ObjectEvent => ({
  type: 'registered',
  eventId: 'ev-registered',
  data: { serviceSerial: 'HM-7K2QD-M4X9P-0ZRTW', title: 'Reverso', category, ownerId, link },
});

const register = (overrides: Partial<Extract<ObjectCommand, { type: 'RegisterObject' }>> = {}): ObjectCommand => ({
  type: 'RegisterObject',
  objectId: 'obj_1',
  serial: 'HM-7K2QD-M4X9P-0ZRTW',
  link,
  title: 'Reverso',
  category: 'watch',
  ownerId: 'jane',
  ...overrides,
});

/** A 64-bit hash `bits` bits away from all zeros (the lowest bits set). */
const hashAt = (bits: number) => (bits === 0 ? 0n : (1n << BigInt(bits)) - 1n).toString(16).padStart(16, '0');

const analysis = (perceptualHash: string, anchors = 10, entropyBits = 37): PhotoAnalysis => ({
  format: 'jpeg',
  width: 640,
  height: 480,
  perceptualHash,
  anchors,
  entropyBits,
  spatialRelations: (anchors * (anchors - 1)) / 2,
});

/** Room the photo tests do not run out of (P7 has its own). */
const roomy = { usedBytes: 0, limitBytes: 1_000_000_000 };

const bind = (angle: string, sha256: string, check: PhotoCheck, size = 1000, storage = roomy): ObjectCommand => ({
  type: 'BindPhoto',
  objectId: 'obj_1',
  angle,
  sha256,
  size,
  analysis: check,
  storage,
});

const photographed = (angle: string, sha256: string, hash: string, previous?: string, entropyBits = 37): ObjectEvent => ({
  type: 'photographed',
  data: {
    angle,
    sha256,
    size: 1000,
    ...analysis(hash, 10, entropyBits),
    replaced: previous !== undefined,
    ...(previous ? { replacedSha256: previous } : {}),
  },
});

const note = (type: string, data: Partial<NoteData> = {}, eventId?: string): ObjectEvent =>
  ({ type, ...(eventId ? { eventId } : {}), data: { evidence: {}, ...data } }) as ObjectEvent;

const record = (
  eventType: string,
  extra: Partial<Extract<ObjectCommand, { type: 'RecordProvenanceEvent' }>> = {},
): ObjectCommand => ({
  type: 'RecordProvenanceEvent',
  objectId: 'obj_1',
  eventType,
  actorRole: 'specialist',
  evidence: {},
  evidenceRequired: ['authenticated', 'condition_report'],
  ...extra,
});

const sale = (from = 'jane', to = 'buyer', transferId = 'trf_1'): AuctionEvent[] => {
  const terms = { transferId, fromOwnerId: from, toOwnerId: to, salePrice: 1000, saleCurrency: 'EUR' };
  return [
    { type: 'transfer_initiated', data: { ...terms, expiresAt: '2025-03-04T10:00:00.000Z' } },
    { type: 'sold', data: terms },
    { type: 'transferred', data: { transferId, fromOwnerId: from, toOwnerId: to } },
  ];
};

/** given(events).when(command).then(events or a refusal): the decider alone. */
function given(events: AuctionEvent[]) {
  const state: ObjectFacts | undefined = events.length === 0 ? undefined : events.reduce(evolve, initialObjectFacts('obj_1'));
  return {
    state,
    when(command: ObjectCommand) {
      const decision = decide(command, state);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
        then(expected: ObjectEvent[]) {
          expect(decision).toEqual(expected);
          return expected.reduce<ObjectFacts>(evolve, state ?? initialObjectFacts('obj_1'));
        },
        thenRefused(code: DomainError['code'], details: Record<string, unknown> = {}) {
          expect(isRefusal(decision), JSON.stringify(decision)).toBe(true);
          expect(decision).toMatchObject({ code, details });
          return decision as DomainError;
        },
      };
    },
  };
}

describe('registration', () => {
  it('records registered with serial, title, category, owner and link; status consigned (R3)', () => {
    const after = given([])
      .when(register({ description: 'steel' }))
      .then([
        {
          type: 'registered',
          data: {
            serviceSerial: 'HM-7K2QD-M4X9P-0ZRTW',
            title: 'Reverso',
            category: 'watch',
            description: 'steel',
            ownerId: 'jane',
            link,
          },
        },
      ]);
    expect(after).toMatchObject({ registered: true, status: 'consigned', category: 'watch', ownerId: 'jane' });
  });

  it.each(['watch', 'painting', 'bottle'])('registers each category: %s (R1)', (category) => {
    const decision = decide(register({ category }), undefined);
    expect(decision).toMatchObject([{ type: 'registered', data: { category } }]);
  });

  it('refuses another category, naming the three (R1)', () =>
    given([])
      .when(register({ category: 'car' }))
      .thenRefused('VALIDATION_ERROR', {
        fields: [{ field: 'category', in: 'body' }],
        allowed: ['watch', 'painting', 'bottle'],
      }));

  it('refuses estimated_value with min above max (R2)', () =>
    given([])
      .when(register({ estimatedValue: { min: 4001, max: 4000, currency: 'EUR' } }))
      .thenRefused('VALIDATION_ERROR', { fields: [{ field: 'estimated_value.min', in: 'body' }] }));

  it('takes min equal to max, and keeps the estimate in the event (R2)', () =>
    expect(decide(register({ estimatedValue: { min: 4000, max: 4000, currency: 'EUR' } }), undefined)).toMatchObject([
      { type: 'registered', data: { estimatedValue: { min: 4000, max: 4000, currency: 'EUR' } } },
    ]));

  it('refuses to register an object twice (R4)', () =>
    given([registered()]).when(register()).thenRefused('CONFLICT', { objectId: 'obj_1' }));
});

describe('unknown objects', () => {
  it('refuses every command on an object that does not exist (E7)', () => {
    given([]).when(record('cataloged')).thenRefused('NOT_FOUND', { objectId: 'obj_1' });
    given([])
      .when(record('cataloged', { eventId: 'ev-1' }))
      .thenRefused('NOT_FOUND', { objectId: 'obj_1' });
    given([])
      .when(bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .thenRefused('NOT_FOUND', { objectId: 'obj_1' });
  });
});

describe('photos', () => {
  it('records photographed with sha256, hash and figures (P5)', () =>
    given([registered()])
      .when(bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }, 2048))
      .then([
        {
          type: 'photographed',
          data: { angle: 'dial', sha256: 'a'.repeat(64), size: 2048, ...analysis(hashAt(0)), replaced: false },
        },
      ]));

  it.each(Object.entries(categoryAngles))('takes each angle its category requires: %s (P1)', (category, angles) => {
    for (const angle of angles) {
      const decision = decide(
        bind(angle, 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }),
        given([registered(category as 'watch')]).state,
      );
      expect(decision, angle).toMatchObject([{ type: 'photographed', data: { angle } }]);
    }
  });

  it('refuses an angle of another category, naming the category’s angles (P1)', () =>
    given([registered('bottle')])
      .when(bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .thenRefused('VALIDATION_ERROR', {
        fields: [{ field: 'angle', in: 'body' }],
        allowed: ['front_label', 'closure', 'back_label', 'fill_level'],
      }));

  it('refuses a photo the decoder refused, with its reason (P2)', () =>
    given([registered()])
      .when(bind('dial', 'a'.repeat(64), { ok: false, problem: 'the photo is smaller than 64×64 pixels.' }))
      .thenRefused('VALIDATION_ERROR', {
        fields: [{ field: 'photo', in: 'body', message: 'the photo is smaller than 64×64 pixels.' }],
      }));

  it('refuses the picture bound at another angle: 10 of 64 bits apart (P3)', () =>
    given([registered(), photographed('dial', 'a'.repeat(64), hashAt(0))])
      .when(bind('movement', 'b'.repeat(64), { ok: true, analysis: analysis(hashAt(10)) }))
      .thenRefused('CONFLICT', { angle: 'movement', similarTo: 'dial', distance: 10, threshold: 10 }));

  it('takes a photo 11 bits away from every other angle’s photo (P3)', () =>
    expect(
      given([registered(), photographed('dial', 'a'.repeat(64), hashAt(0))])
        .when(bind('movement', 'b'.repeat(64), { ok: true, analysis: analysis(hashAt(11)) }))
        .then([photographed('movement', 'b'.repeat(64), hashAt(11))]).photos.size,
    ).toBe(2));

  it('names the closest of several same pictures (P3)', () =>
    given([registered(), photographed('dial', 'a'.repeat(64), hashAt(9)), photographed('case_back', 'c'.repeat(64), hashAt(2))])
      .when(bind('movement', 'b'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .thenRefused('CONFLICT', { similarTo: 'case_back', distance: 2 }));

  it('refuses a photo the owner has no room for, takes one that fills it exactly (P7)', () => {
    given([registered()])
      .when(
        bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }, 2_001, {
          usedBytes: 8_000,
          limitBytes: 10_000,
        }),
      )
      .thenRefused('PAYLOAD_TOO_LARGE', { limit: 'photo-storage', usedBytes: 8_000, limitBytes: 10_000, size: 2_001 });
    expect(
      decide(
        bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }, 2_000, {
          usedBytes: 8_000,
          limitBytes: 10_000,
        }),
        given([registered()]).state,
      ),
    ).toMatchObject([{ type: 'photographed', data: { size: 2_000 } }]);
  });

  it('counts every photo bound, replaced ones too (P7)', () => {
    const after = given([registered(), photographed('dial', 'a'.repeat(64), hashAt(0))])
      .when(bind('dial', 'b'.repeat(64), { ok: true, analysis: analysis(hashAt(1)) }))
      .then([photographed('dial', 'b'.repeat(64), hashAt(1), 'a'.repeat(64))]);
    expect(after.photos.size).toBe(1);
    expect(after.photoBytes).toBe(2_000);
  });

  it('a retry of a stored binding (its Idempotency-Key’s event id) records nothing, whatever the rules say now (P8)', () => {
    const stored = { ...photographed('dial', 'a'.repeat(64), hashAt(0)), eventId: 'ev-photo-1' } as ObjectEvent;
    const retry = { ...bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }), eventId: 'ev-photo-1' };
    given([registered(), stored]).when(retry).then([]);
    // A new key's binding carries its id.
    expect(decide({ ...retry, eventId: 'ev-photo-2' } as ObjectCommand, given([registered(), stored]).state)).toMatchObject([
      { type: 'photographed', eventId: 'ev-photo-2' },
    ]);
  });

  it('the same picture again at its own angle replaces it (P4, P5)', () => {
    const after = given([registered(), photographed('dial', 'a'.repeat(64), hashAt(0))])
      .when(bind('dial', 'b'.repeat(64), { ok: true, analysis: analysis(hashAt(1)) }))
      .then([photographed('dial', 'b'.repeat(64), hashAt(1), 'a'.repeat(64))]);
    expect(after.photos.get('dial')?.sha256).toBe('b'.repeat(64));
    expect(after.photos.size).toBe(1);
  });

  it('a picture no longer bound (its angle has another photo now) is not compared (P4)', () =>
    given([
      registered(),
      photographed('dial', 'a'.repeat(64), hashAt(0)),
      photographed('dial', 'b'.repeat(64), hashAt(40), 'a'.repeat(64)),
    ])
      .when(bind('movement', 'c'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .then([photographed('movement', 'c'.repeat(64), hashAt(0))]));

  it('photo_status is pending until every required angle is bound, then valid (P6)', () => {
    const angles = categoryAngles.watch;
    let events: AuctionEvent[] = [registered()];
    angles.forEach((angle, index) => {
      const state = given(events).state as ObjectFacts;
      expect(securityFigures({ category: 'watch', photos: state.photos }).photo_status).toEqual({
        count: index,
        required: angles.length,
        binding_status: 'pending',
      });
      // Hashes 16 bits apart, so no two are the same picture.
      const hash = (0xffffn << BigInt(16 * index)).toString(16).padStart(16, '0');
      events = [...events, photographed(angle, String(index).repeat(64), hash)];
    });
    const state = given(events).state as ObjectFacts;
    expect(securityFigures({ category: 'watch', photos: state.photos }).photo_status).toEqual({
      count: 4,
      required: 4,
      binding_status: 'valid',
    });
  });

  it('security tier: basic without photos, standard with some, enhanced with every angle and 128 bits (P6)', () => {
    const tier = (events: AuctionEvent[]) =>
      securityFigures({ category: 'watch', photos: (given(events).state as ObjectFacts).photos }).security_tier;
    const hash = (index: number) => (0xffffn << BigInt(16 * index)).toString(16).padStart(16, '0');
    const all = (bits: number) =>
      categoryAngles.watch.map((angle, i) => photographed(angle, `${i}`.repeat(64), hash(i), undefined, bits));
    expect(tier([registered()])).toBe('basic');
    expect(tier([registered(), ...all(40).slice(0, 3)])).toBe('standard');
    expect(tier([registered(), ...all(31)])).toBe('standard'); // 124 bits
    expect(tier([registered(), ...all(32)])).toBe('enhanced'); // 128 bits
  });
});

describe('provenance events', () => {
  it.each(['cataloged', 'photographed', 'authenticated', 'condition_report', 'exhibited', 'listed'])(
    'records each client type: %s (E1)',
    (type) => {
      given([registered()])
        .when(record(type, { actorName: 'A. Expert', description: 'seen', evidence: { report: 'r-1' } }))
        .then([
          note(type, { actorRole: 'specialist', actorName: 'A. Expert', description: 'seen', evidence: { report: 'r-1' } }),
        ]);
    },
  );

  it('records withdrawn on a listed object (E1)', () =>
    given([registered(), note('listed')])
      .when(record('withdrawn'))
      .then([note('withdrawn', { actorRole: 'specialist' })]));

  it.each([
    ['registered', 'POST /auction/objects/register'],
    ['sold', 'a confirmed transfer'],
    ['transferred', 'a confirmed transfer'],
  ])('refuses %s, naming where it is recorded (E2)', (type, where) => {
    const refusal = given([registered()])
      .when(record(type))
      .thenRefused('VALIDATION_ERROR', {
        fields: [{ field: 'eventType', in: 'body' }],
      });
    expect(refusal.message).toContain(where);
  });

  it('refuses an unknown type, naming the types a client records (E2)', () =>
    given([registered()])
      .when(record('stolen'))
      .thenRefused('VALIDATION_ERROR', {
        allowed: ['cataloged', 'photographed', 'authenticated', 'condition_report', 'exhibited', 'listed', 'withdrawn'],
      }));

  it('refuses a type the config lists without evidence (E3)', () => {
    for (const type of ['authenticated', 'condition_report']) {
      given([registered()])
        .when(record(type))
        .thenRefused('VALIDATION_ERROR', { fields: [{ field: 'evidence', in: 'body' }] });
    }
  });

  it('takes a type the config lists with evidence (E3)', () =>
    given([registered()])
      .when(record('authenticated', { evidence: { certificate: 'c-1' } }))
      .then([note('authenticated', { actorRole: 'specialist', evidence: { certificate: 'c-1' } })]));

  it('refuses evidence over 16 KiB as UTF-8 JSON, takes it at the limit (E3b)', () => {
    // {"note":"…"} is 11 bytes of JSON around the text; '€' is 3 bytes in UTF-8: 11 + 3 × 5,457 + 2 = 16,384.
    const atLimit = { note: `${'€'.repeat(5_457)}ab` };
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(maxEvidenceBytes);
    given([registered()])
      .when(record('cataloged', { evidence: atLimit }))
      .then([note('cataloged', { actorRole: 'specialist', evidence: atLimit })]);
    given([registered()])
      .when(record('cataloged', { evidence: { note: `${atLimit.note}g` } }))
      .thenRefused('VALIDATION_ERROR', { fields: [{ field: 'evidence', in: 'body' }] });
  });

  it('a type the config does not list needs none; a config can list any type (E3)', () => {
    given([registered()])
      .when(record('authenticated', { evidenceRequired: [] }))
      .then([note('authenticated', { actorRole: 'specialist' })]);
    given([registered()])
      .when(record('exhibited', { evidenceRequired: ['exhibited'] }))
      .thenRefused('VALIDATION_ERROR', { fields: [{ field: 'evidence' }] });
  });

  it('a photographed note binds no photo (E5)', () => {
    const after = given([registered()])
      .when(record('photographed'))
      .then([note('photographed', { actorRole: 'specialist' })]);
    expect(after.photos.size).toBe(0);
  });
});

describe('the states table (E4, T1)', () => {
  const consigned: AuctionEvent[] = [registered()];
  const listed: AuctionEvent[] = [registered(), note('listed')];
  const sold: AuctionEvent[] = [registered(), ...sale()];
  const status = (events: AuctionEvent[]) => (given(events).state as ObjectFacts).status;

  it('consigned: listed -> listed, withdrawn 409, others stay, a confirmed transfer -> sold', () => {
    expect(
      given(consigned)
        .when(record('listed'))
        .then([note('listed', { actorRole: 'specialist' })]).status,
    ).toBe('listed');
    given(consigned).when(record('withdrawn')).thenRefused('CONFLICT', { status: 'consigned', eventType: 'withdrawn' });
    expect(
      given(consigned)
        .when(record('exhibited'))
        .then([note('exhibited', { actorRole: 'specialist' })]).status,
    ).toBe('consigned');
    expect(status([...consigned, ...sale()])).toBe('sold');
  });

  it('listed: listed 409, withdrawn -> consigned, others stay, a confirmed transfer -> sold', () => {
    given(listed).when(record('listed')).thenRefused('CONFLICT', { status: 'listed', eventType: 'listed' });
    expect(
      given(listed)
        .when(record('withdrawn'))
        .then([note('withdrawn', { actorRole: 'specialist' })]).status,
    ).toBe('consigned');
    expect(
      given(listed)
        .when(record('cataloged'))
        .then([note('cataloged', { actorRole: 'specialist' })]).status,
    ).toBe('listed');
    expect(status([...listed, ...sale()])).toBe('sold');
  });

  it('sold: listed 409, withdrawn 409, others stay, a resale by the new owner stays sold', () => {
    given(sold).when(record('listed')).thenRefused('CONFLICT', { status: 'sold', eventType: 'listed' });
    given(sold).when(record('withdrawn')).thenRefused('CONFLICT', { status: 'sold', eventType: 'withdrawn' });
    expect(
      given(sold)
        .when(record('exhibited'))
        .then([note('exhibited', { actorRole: 'specialist' })]).status,
    ).toBe('sold');
    const resold = given([...sold, ...sale('buyer', 'third', 'trf_2')]).state as ObjectFacts;
    expect(resold).toMatchObject({ status: 'sold', ownerId: 'third' });
  });
});

describe('an Idempotency-Key (E6)', () => {
  it('the event carries the id the key gives', () =>
    given([registered()])
      .when(record('cataloged', { eventId: 'ev-key' }))
      .then([note('cataloged', { actorRole: 'specialist' }, 'ev-key')]));

  it('a retry whose event is stored records nothing, even where the rules would now refuse it', () => {
    const stored = [registered(), note('listed', {}, 'ev-key')];
    given(stored)
      .when(record('listed', { eventId: 'ev-key' }))
      .then([]);
    // Another key is another request: listed twice is refused.
    given(stored)
      .when(record('listed', { eventId: 'ev-other' }))
      .thenRefused('CONFLICT', { status: 'listed' });
  });
});

describe('a full history (E8)', () => {
  // The registration and notes up to `count` events in all.
  const history = (count: number): AuctionEvent[] => [
    registered(),
    ...Array.from({ length: count - 1 }, (_, i) => note('cataloged', {}, `ev-${i}`)),
  ];

  it('takes client events and photos up to the limit, then refuses them with 409 CONFLICT', () => {
    expect(maxObjectEvents).toBe(1_000);
    const almost = history(maxObjectEvents - 1);
    const full = given(almost)
      .when(record('cataloged'))
      .then([note('cataloged', { actorRole: 'specialist' })]);
    expect(full.eventCount).toBe(maxObjectEvents);
    given(almost)
      .when(bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .then([photographed('dial', 'a'.repeat(64), hashAt(0))]);

    const refusal = given(history(maxObjectEvents))
      .when(record('cataloged'))
      .thenRefused('CONFLICT', { limit: maxObjectEvents, eventCount: maxObjectEvents });
    expect(refusal.message).toContain('no more provenance events or photos');
    given(history(maxObjectEvents))
      .when(bind('dial', 'a'.repeat(64), { ok: true, analysis: analysis(hashAt(0)) }))
      .thenRefused('CONFLICT', { limit: maxObjectEvents });
  });

  it('still answers the retry of a stored event, recording nothing', () =>
    given(history(maxObjectEvents))
      .when(record('cataloged', { eventId: 'ev-3' }))
      .then([]));

  it('counts every event of the stream, transfers too, but not a wrong code (kept private)', () => {
    const { state } = given([
      registered(),
      {
        type: 'transfer_initiated',
        data: {
          transferId: 'trf_1',
          fromOwnerId: 'jane',
          toOwnerId: 'b',
          salePrice: 1,
          saleCurrency: 'EUR',
          expiresAt: '2025-03-04T10:00:00.000Z',
        },
      },
      { type: 'transfer_code_rejected', data: { transferId: 'trf_1', attempts: 1 } },
    ]);
    expect(state?.eventCount).toBe(2);
  });
});

describe('folding a long history (E9)', () => {
  it('folds 20,000 events, each with its id, in well under 2 s (copying the ids per event took minutes)', () => {
    const events: AuctionEvent[] = [registered(), ...Array.from({ length: 19_999 }, (_, i) => note('cataloged', {}, `ev-${i}`))];
    const started = performance.now();
    const state = events.reduce(evolve, initialObjectFacts('obj_1'));
    const elapsedMs = performance.now() - started;
    expect(elapsedMs).toBeLessThan(2_000);
    expect(state.eventCount).toBe(20_000);
    expect(['ev-registered', 'ev-0', 'ev-19998'].map((id) => state.eventIds.has(id))).toEqual([true, true, true]);
    expect(state.eventIds.has('ev-19999')).toBe(false);
  });

  it('leaves the state it was given as it was, whichever of its successors is made', () => {
    const before = given([registered(), note('cataloged', {}, 'ev-1')]).state as ObjectFacts;
    const one = evolve(before, note('cataloged', {}, 'ev-2'));
    const other = evolve(before, note('listed', {}, 'ev-3'));
    expect([before.eventIds.has('ev-2'), before.eventIds.has('ev-3'), before.eventCount, before.status]).toEqual([
      false,
      false,
      2,
      'consigned',
    ]);
    expect([one.eventIds.has('ev-2'), one.eventIds.has('ev-3'), one.eventCount]).toEqual([true, false, 3]);
    expect([other.eventIds.has('ev-3'), other.eventIds.has('ev-2'), other.status]).toEqual([true, false, 'listed']);
    expect(one.eventIds.has('ev-1') && other.eventIds.has('ev-1')).toBe(true);
  });
});
