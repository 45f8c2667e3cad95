import { describe, expect, it } from 'vitest';
import { AI_ROWS } from './ai-table.ts';
import {
  type DlSyntaxOptions,
  escapeUriComponent,
  isValidPathSequence,
  lookupAi,
  parseDlUri,
  unescapeUriComponent,
} from './dl-syntax.ts';
import vectors from './fixtures/gs1-syntax-engine-dl-vectors.json' with { type: 'json' };
import linterVectors from './fixtures/gs1-syntax-engine-linter-vectors.json' with { type: 'json' };
import { CSET_LINTERS, LINTERS } from './linters.ts';

// The GS1 Barcode Syntax Engine's own Digital Link test vectors (fixture header: source, commit,
// licence), each run under the engine options it names. Every one must pass: docs/SIGNING.md.
type ParseVector = { source: string; valid: boolean; uri: string; elementString?: string; options?: DlSyntaxOptions };

describe('GS1 syntax engine vectors: parse a Digital Link URI', () => {
  it.each((vectors.parse as ParseVector[]).map((v) => [`${v.source} ${v.uri.slice(0, 90)}`, v] as const))('%s', (_, vector) => {
    const result = parseDlUri(vector.uri, vector.options);
    if (vector.valid) {
      expect(result).toMatchObject({ ok: true });
      if (result.ok) expect(result.dl.elementString).toBe(vector.elementString);
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toMatch(/\w{3,}.*\./);
    }
  });
});

describe('GS1 syntax engine vectors: gs1_encoder_setDataStr given a URI', () => {
  it.each((vectors.setDataStr as ParseVector[]).map((v) => [`${v.source} ${v.uri}`, v] as const))('%s', (_, vector) => {
    expect(parseDlUri(vector.uri, vector.options).ok).toBe(vector.valid);
  });
});

describe('GS1 syntax engine vectors: valid key and qualifier paths', () => {
  it.each(vectors.pathSequences.map((s) => [s.join(' '), s] as const))('%s', (_, sequence) => {
    expect(isValidPathSequence(sequence)).toBe(true);
  });
});

describe('GS1 syntax engine vectors: URIs the engine writes read back as the same AIs', () => {
  it.each(vectors.generated.map((v) => [`${v.source} ${v.uri}`, v] as const))('%s', (_, vector) => {
    const result = parseDlUri(vector.uri);
    expect(result).toMatchObject({ ok: true });
    const expected = new Map([...vector.aiData.matchAll(/\((\d+)\)([^(]*)/g)].map((m) => [m[1], m[2]]));
    if (result.ok) expect(new Map(result.dl.ais.map((a) => [a.ai, a.value]))).toEqual(expected);
  });
});

describe('GS1 syntax engine vectors: percent-decoding and -encoding', () => {
  it.each(vectors.unescape.map((v) => [JSON.stringify(v.in), v] as const))('decodes %s', (_, vector) => {
    expect(unescapeUriComponent(vector.in, false) ?? null).toBe(vector.path);
    expect(unescapeUriComponent(vector.in, true) ?? null).toBe(vector.query);
  });
  it.each(vectors.escape.map((v) => [JSON.stringify(v.in), v] as const))('encodes %s', (_, vector) => {
    expect(escapeUriComponent(vector.in, false)).toBe(vector.path);
    expect(escapeUriComponent(vector.in, true)).toBe(vector.query);
  });
});

describe('the AI table', () => {
  it('has a linter for every one the dictionary names', () => {
    const named = new Set(
      AI_ROWS.flatMap((row) => row[2].split(/\s+/).flatMap((part) => part.replace(/[[\]]/g, '').split(',').slice(1))),
    );
    expect([...named].filter((name) => !(name in LINTERS))).toEqual([]);
  });

  it.each([
    ['01', 14, 'N', false],
    ['21', 20, 'X', true],
    ['10', 20, 'X', true],
    ['22', 20, 'X', true],
    ['17', 6, 'N', false],
    ['235', 28, 'X', true],
    ['8030', 90, 'Z', true],
    ['8200', 70, 'X', true],
    ['3103', 6, 'N', false],
    ['414', 13, 'N', false],
    ['8004', 30, 'X', true],
  ] as const)('knows AI %s: up to %i characters of set %s (FNC1 after it: %s)', (ai, max, cset, fnc1) => {
    const entry = lookupAi(ai);
    expect(entry?.parts.reduce((sum, part) => sum + part.max, 0)).toBe(max);
    expect(entry?.parts[0]?.cset).toBe(cset);
    expect(entry?.fnc1).toBe(fnc1);
  });

  it('does not take an AI that extends a known one, nor a non-numeric key', () => {
    expect(lookupAi('999')).toBeUndefined();
    expect(lookupAi('sig')).toBeUndefined();
    expect(lookupAi('89')).toBeUndefined();
    expect(lookupAi('89', true)?.unknown).toBe(true);
  });
});

describe('parseDlUri reasons', () => {
  const gtin = '09506000134352';
  it.each([
    [`https://x.y/01/${gtin}?17=261231&17=261231`, /AI 17 .*given twice/],
    [`https://x.y/01/${gtin}/21/A?21=B`, /AI 21 .*given twice/],
    [`https://x.y/01/${gtin}?10=L1`, /AI 10 .*belongs in the path/],
    [`https://x.y/01/${gtin}?21=S1`, /AI 21 .*belongs in the path/],
    [`https://x.y/01/${gtin}/17/261231`, /not a valid key and qualifiers/],
    [`https://x.y/01/${gtin}?999=x`, /query key 999 is numeric but not a GS1 AI/],
    [`https://x.y/01/${gtin}?8200=x`, /cannot be a Digital Link data attribute/],
    [`https://x.y/01/${gtin}?=x`, /no name before "="/],
    [`https://x.y/01/${gtin}?17=261340`, /AI 17 .*month 13/],
    [`https://x.y/01/09506000134353`, /AI 01 .*check digit 3.*call for 2/],
    [`https://x.y/01//${gtin}`, /primary key/],
    [`https://x.y/01/${gtin}/10/`, /ends in "\/"|empty value/],
    [`https://x.y/01/${gtin}/21/${'S'.repeat(21)}`, /AI 21 .*too long: 21 characters, at most 20/],
    [`https://x.y/01/${gtin}/21/S%23`, /AI 21 .*"#".*set 82/],
    [`https://x.y/01/${gtin}/21/S<`, /"<"/],
    [`https://x.y/01/${gtin}/21/S1/10/L1`, /after \/01\/ GS1 allows/],
  ])('refuses %s, saying why', (uri, reason) => {
    const result = parseDlUri(uri);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(reason);
  });

  it('accepts /21/ before /10/ only when asked to', () => {
    expect(parseDlUri(`https://x.y/01/${gtin}/21/S1/10/L1`, { permitSerialBeforeBatch: true }).ok).toBe(true);
    expect(parseDlUri(`https://x.y/01/${gtin}/22/V/21/S1/10/L1`, { permitSerialBeforeBatch: true }).ok).toBe(true);
  });

  it('passes non-numeric query keys through, undecoded', () => {
    const result = parseDlUri(`https://x.y/01/${gtin}/21/S1?sig=abc_-&linkType=gs1%3Apip&flag`);
    expect(result).toMatchObject({
      ok: true,
      dl: {
        otherParams: [{ key: 'sig', value: 'abc_-' }, { key: 'linkType', value: 'gs1%3Apip' }, { key: 'flag' }],
        stem: 'https://x.y',
      },
    });
  });
});

describe('GS1 syntax engine vectors: the linters', () => {
  const csets: Record<string, keyof typeof CSET_LINTERS> = { csetnumeric: 'N', cset82: 'X', cset39: 'Y', cset64: 'Z' };
  const linterOf = (name: string) => (name in csets ? CSET_LINTERS[csets[name] as keyof typeof CSET_LINTERS] : LINTERS[name]);
  it.each(Object.entries(linterVectors.linters))('%s', (name, { pass, fail }) => {
    const linter = linterOf(name);
    expect(linter, name).toBeDefined();
    expect(pass.filter((value) => linter?.(value) !== undefined)).toEqual([]);
    expect(fail.filter((value) => linter?.(value) === undefined)).toEqual([]);
  });
});

describe('the GS1 Company Prefix position checks (the engine builds these cases in loops)', () => {
  it.each([
    ['gcppos1', ['01234', '0123', '0123A'], ['012', '01', '0', '', '012AA', '01AAA', '0AAAA', 'AAAAA']],
    ['gcppos2', ['I01234', 'I0123', 'I0123A', '001234'], ['I012', 'I', '', 'I012AA', 'I01AAA', 'I0AAAA', 'IAAAAA']],
  ] as const)('%s', (name, pass, fail) => {
    const linter = LINTERS[name] as (value: string) => string | undefined;
    expect(pass.filter((value) => linter(value) !== undefined)).toEqual([]);
    expect(fail.filter((value) => linter(value) === undefined)).toEqual([]);
  });
});
