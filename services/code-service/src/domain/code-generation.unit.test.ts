import { describe, expect, it } from 'vitest';
import {
  type CodeEvent,
  type CodeOwner,
  type DomainError,
  decide,
  decideBatch,
  evolve,
  type GenerateCodeCommand,
  initialCodeBatch,
  isDomainError,
  testCodeLifetimeMs,
} from './code-generation.ts';

const T0 = new Date('2026-11-25T10:00:00.000Z');
const brand: CodeOwner = { accountId: 'acc_brand', environment: 'live' };
const gtin = '09506000134352';

const generate = (serial: string, extra: Partial<GenerateCodeCommand> = {}): GenerateCodeCommand => ({
  type: 'GenerateCode',
  now: T0,
  assetId: `code_${serial}`,
  gtin,
  serial,
  batch: undefined,
  expiry: undefined,
  metadata: {},
  signerAccountId: brand.accountId,
  ...extra,
});
const generated = (serial: string, extra: Partial<CodeEvent['data']> = {}): CodeEvent => ({
  type: 'code.generated',
  data: {
    assetId: `code_${serial}`,
    gtin,
    serial,
    batch: undefined,
    expiry: undefined,
    metadata: {},
    createdAt: T0.toISOString(),
    expiresAt: null,
    ...extra,
  },
});

/** given(events of this batch).when(command).then(events or a refusal): the decider alone. */
function given(events: CodeEvent[], owner: CodeOwner = brand) {
  const state = events.reduce(evolve, initialCodeBatch(owner));
  return {
    when(command: GenerateCodeCommand) {
      const decision = decide(command, state);
      return {
        // biome-ignore lint/suspicious/noThenProperty: the given/when/then spec form; this object is never awaited
        then(expected: CodeEvent[]) {
          expect(decision).toEqual(expected);
        },
        thenRefused(code: DomainError['code'], details: Record<string, unknown> = {}) {
          expect(isDomainError(decision), JSON.stringify(decision)).toBe(true);
          expect(decision).toMatchObject({ code, details });
        },
      };
    },
  };
}

describe('who may make a code', () => {
  it('the GTIN’s signer makes it', () =>
    given([])
      .when(generate('A'))
      .then([generated('A')]));

  it('another account’s GTIN is refused', () =>
    given([])
      .when(generate('A', { signerAccountId: 'acc_rival' }))
      .thenRefused('GTIN_NOT_OWNED', { gtin }));

  it('a GTIN nobody may sign (no owner, no operator) is refused', () =>
    given([])
      .when(generate('A', { signerAccountId: undefined }))
      .thenRefused('GTIN_NOT_OWNED', { gtin }));

  it('ownership is decided before the schema', () =>
    given([])
      .when(
        generate('A', { signerAccountId: 'acc_rival', schema: { found: false, schemaId: 'sch_x', schemaVersion: undefined } }),
      )
      .thenRefused('GTIN_NOT_OWNED'));
});

describe('a batch takes a GTIN and serial once', () => {
  it('a serial already made in this batch is DUPLICATE_SERIAL', () =>
    given([generated('A')])
      .when(generate('A', { assetId: 'code_other' }))
      .thenRefused('DUPLICATE_SERIAL', { gtin, serial: 'A' }));

  it('the same serial under another GTIN is another code', () =>
    given([generated('A')])
      .when(generate('A', { gtin: '04006381333931', assetId: 'code_B' }))
      .then([generated('A', { gtin: '04006381333931', assetId: 'code_B' })]));

  it('a refused item takes nothing: the serial is free for the next item', () => {
    const refused = decide(generate('A', { signerAccountId: 'acc_rival' }), initialCodeBatch(brand));
    expect(isDomainError(refused)).toBe(true);
    given([])
      .when(generate('A'))
      .then([generated('A')]);
  });
});

describe('metadata schemas, as facts', () => {
  it('a schema that is not there is a VALIDATION_ERROR on schemaId', () =>
    given([])
      .when(generate('A', { schema: { found: false, schemaId: 'sch_gone', schemaVersion: 3 } }))
      .thenRefused('VALIDATION_ERROR', { fields: [expect.objectContaining({ field: 'schemaId' })] }));

  it('metadata the schema refuses is a VALIDATION_ERROR naming the version', () =>
    given([])
      .when(
        generate('A', { schema: { found: true, schemaId: 'sch_1', version: 2, isValid: false, errors: [{ field: 'name' }] } }),
      )
      .thenRefused('VALIDATION_ERROR', { schemaId: 'sch_1', schemaVersion: 2, errors: [{ field: 'name' }] }));

  it('the code names the schema version it was checked against', () =>
    given([])
      .when(generate('A', { schema: { found: true, schemaId: 'sch_1', version: 2, isValid: true, errors: [] } }))
      .then([generated('A', { schemaId: 'sch_1', schemaVersion: 2 })]));
});

describe('when a code expires', () => {
  const test: CodeOwner = { accountId: brand.accountId, environment: 'test' };

  it('a live code without an expiry date never expires', () =>
    given([])
      .when(generate('A'))
      .then([generated('A')]));

  it('a test code expires 24 hours after it was made', () =>
    given([], test)
      .when(generate('A'))
      .then([generated('A', { expiresAt: new Date(T0.getTime() + testCodeLifetimeMs).toISOString() })]));

  it('a code with an expiry date expires at the end of that day', () =>
    given([])
      .when(generate('A', { expiry: '301231' }))
      .then([generated('A', { expiry: '301231', expiresAt: '2031-01-01T00:00:00.000Z' })]));

  it('a test code with an expiry date tomorrow expires at the sooner of the two', () =>
    given([], test)
      .when(generate('A', { expiry: '261125' }))
      .then([generated('A', { expiry: '261125', expiresAt: '2026-11-26T00:00:00.000Z' })]));
});

describe('a whole batch at once', () => {
  it('decides as folding decide and evolve item after item would', () => {
    const commands = [
      generate('A'),
      generate('B', { signerAccountId: 'acc_rival' }),
      generate('A', { assetId: 'code_A2' }),
      generate('B', { assetId: 'code_B2' }),
      generate('B', { assetId: 'code_B3' }),
    ];
    let state = initialCodeBatch(brand);
    const folded = commands.map((command) => {
      const decision = decide(command, state);
      if (!isDomainError(decision)) state = decision.reduce(evolve, state);
      return decision;
    });
    const batch = decideBatch(commands, initialCodeBatch(brand));
    expect(batch).toEqual(folded);
    expect(batch.map((decision) => (isDomainError(decision) ? decision.code : 'ok'))).toEqual([
      'ok',
      'GTIN_NOT_OWNED',
      'DUPLICATE_SERIAL',
      'ok',
      'DUPLICATE_SERIAL',
    ]);
  });

  it('leaves the state it was given as it was', () => {
    const state = initialCodeBatch(brand);
    decideBatch([generate('A')], state);
    expect(state.taken.size).toBe(0);
  });
});
