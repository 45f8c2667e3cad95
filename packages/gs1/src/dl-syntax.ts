import { AI_ROWS } from './ai-table.ts';
import { CSET_LINTERS, LINTERS } from './linters.ts';

/**
 * GS1 Digital Link URI syntax, checked the way the GS1 Barcode Syntax Engine checks it
 * (github.com/gs1/gs1-syntax-engine, `gs1_encoder_setDataStr` given a URI): the rightmost primary
 * key in the path and its key qualifiers in one of the orders the GS1 Barcode Syntax Dictionary
 * allows, AIs in the query only if they are data attributes that do not belong in the path, no AI
 * twice, numeric query keys only if they are AIs (other keys pass), and every value's length,
 * character set and content checks (check digits, dates, code lists), then the dictionary's rules
 * on AIs that exclude or require each other. Written from the engine's documentation and tests;
 * its test vectors live in fixtures/gs1-syntax-engine-dl-vectors.json.
 */

export interface AiPart {
  cset: 'N' | 'X' | 'Y' | 'Z';
  min: number;
  max: number;
  optional: boolean;
  linters: string[];
}

export interface AiEntry {
  ai: string;
  /** Followed by FNC1 in an element string (not a predefined length). */
  fnc1: boolean;
  /** May be a Digital Link data attribute (query parameter). */
  dlAttribute: boolean;
  parts: AiPart[];
  /** `req=` groups, each a list of alternatives, each a list of AIs or patterns (`31nn`). */
  requires: string[][][];
  /** `ex=` AIs or patterns this AI may not appear with. */
  excludes: string[];
  /** Key-qualifier lists when the AI is a Digital Link primary key. */
  qualifiers?: string[][];
  title: string;
  unknown?: boolean;
}

function parsePart(text: string): AiPart {
  const optional = text.startsWith('[');
  const [type = '', ...linters] = text.replace(/[[\]]/g, '').split(',');
  const match = /^([NXYZ])(\d*)(?:\.\.(\d+))?$/.exec(type);
  if (!match) throw new Error(`Unreadable AI component ${text}`);
  const [, cset, first, last] = match;
  const min = last === undefined ? Number(first) : first ? Number(first) : 1;
  return { cset: cset as AiPart['cset'], min, max: last === undefined ? Number(first) : Number(last), optional, linters };
}

function toEntry([ai, flags, spec, attrs, title]: readonly [string, string, string, string, string]): AiEntry {
  const tokens = attrs.split(/\s+/).filter(Boolean);
  const entry: AiEntry = {
    ai,
    fnc1: !flags.includes('*'),
    dlAttribute: flags.includes('?'),
    parts: spec.split(/\s+/).filter(Boolean).map(parsePart),
    requires: tokens
      .filter((t) => t.startsWith('req='))
      .map((t) =>
        t
          .slice(4)
          .split(',')
          .map((group) => group.split('+')),
      ),
    excludes: tokens.filter((t) => t.startsWith('ex=')).flatMap((t) => t.slice(3).split(',')),
    title,
  };
  for (const token of tokens) {
    if (token === 'dlpkey') entry.qualifiers = [[]];
    else if (token.startsWith('dlpkey='))
      entry.qualifiers = token
        .slice(7)
        .split('|')
        .map((alt) => alt.split(','));
  }
  return entry;
}

const TABLE = new Map(AI_ROWS.map((row) => [row[0], toEntry(row)]));

/** Every AI in the dictionary, by AI. */
export const AI_TABLE: ReadonlyMap<string, AiEntry> = TABLE;

/** Every valid primary-key path: the key, then any in-order subset of one of its qualifier lists. */
const PATH_SEQUENCES = new Set<string>();
for (const entry of TABLE.values()) {
  for (const qualifiers of entry.qualifiers ?? []) {
    let sequences: string[][] = [[entry.ai]];
    for (const qualifier of qualifiers) sequences = [...sequences, ...sequences.map((s) => [...s, qualifier])];
    for (const sequence of sequences) PATH_SEQUENCES.add(sequence.join(' '));
  }
}

/** Whether these AIs, in this order, are a primary key and key qualifiers GS1 allows in a path. */
export function isValidPathSequence(ais: readonly string[]): boolean {
  return PATH_SEQUENCES.has(ais.join(' '));
}

const lengthByPrefix = new Map<string, number>();
for (const ai of TABLE.keys()) lengthByPrefix.set(ai.slice(0, 2), ai.length);
/** Value lengths fixed by an AI's first two digits (GS1 General Specifications, figure 5.10.1-2). */
const FIXED_BY_PREFIX: Record<string, number> = { '00': 18, '01': 14, '02': 14, '03': 14, '04': 16, '20': 2, '41': 13 };
for (let p = 11; p <= 19; p++) FIXED_BY_PREFIX[String(p)] = 6;
for (let p = 31; p <= 36; p++) FIXED_BY_PREFIX[String(p)] = 6;

function unknownEntry(ai: string, fixed?: number): AiEntry {
  const part: AiPart = { cset: 'X', min: fixed ?? 1, max: fixed ?? 90, optional: false, linters: [] };
  return {
    ai,
    fnc1: fixed === undefined,
    dlAttribute: false,
    parts: [part],
    requires: [],
    excludes: [],
    title: 'UNKNOWN',
    unknown: true,
  };
}

/**
 * The dictionary entry of an AI given exactly, or undefined. With `permitUnknownAIs`, a numeric AI
 * that no known AI is a prefix of, and whose length agrees with its first two digits, is taken as
 * an unknown AI of up to 90 characters of set 82 (fixed where the prefix fixes it).
 */
export function lookupAi(ai: string, permitUnknownAIs = false): AiEntry | undefined {
  if (ai.length < 2 || ai.length > 4 || !/^[0-9]+$/.test(ai)) return undefined;
  const known = TABLE.get(ai);
  if (known) return known;
  for (let n = 2; n < ai.length; n++) if (TABLE.has(ai.slice(0, n))) return undefined;
  if (!permitUnknownAIs) return undefined;
  const byPrefix = lengthByPrefix.get(ai.slice(0, 2));
  if (byPrefix !== undefined && byPrefix !== ai.length) return undefined;
  const fixed = FIXED_BY_PREFIX[ai.slice(0, 2)];
  if (byPrefix === 3 && fixed === 13) return unknownEntry(ai, 13);
  if (byPrefix === 4 && fixed === 6) return unknownEntry(ai, 6);
  return unknownEntry(ai);
}

/** GS1's deprecated short names for path AIs ("convenience alphas"), read only when asked for. */
const CONVENIENCE_ALPHAS: Record<string, string> = {
  cpid: '8010',
  cpsn: '8011',
  cpv: '22',
  gcn: '255',
  gdti: '253',
  giai: '8004',
  ginc: '401',
  gln: '414',
  glnx: '254',
  gmn: '8013',
  grai: '8003',
  gsin: '402',
  gsrn: '8018',
  gsrnp: '8017',
  gtin: '01',
  itip: '8006',
  lot: '10',
  party: '417',
  refno: '8020',
  ser: '21',
  srin: '8019',
  sscc: '00',
};

export interface DlSyntaxOptions {
  /** Read GTIN-8, -12 and -13 in AI 01 as a GTIN-14 with leading zeros (engine default: off). */
  permitZeroSuppressedGtin?: boolean;
  /** Read `/gtin/`, `/ser/` and the other short names for AIs in the path (engine default: off). */
  permitConvenienceAlphas?: boolean;
  /** Accept AIs missing from the dictionary (engine default: off). */
  permitUnknownAIs?: boolean;
  /** With `permitUnknownAIs`, accept unknown AIs as query data attributes too (engine default: off). */
  permitUnknownAIsAsAttributes?: boolean;
  /** Check the dictionary's `req=` rules: AIs that need others beside them (engine default: on). */
  checkRequisites?: boolean;
  /**
   * Also accept `/21/<serial>/10/<batch>`, the order of Hallmark's interface spec, where GS1 allows
   * only `/10/` before `/21/` (off here; Hallmark's own reader turns it on: docs/SIGNING.md).
   */
  permitSerialBeforeBatch?: boolean;
}

export interface DlAiValue {
  ai: string;
  value: string;
  /** Position in the path (0 is the primary key), or undefined for a query data attribute. */
  pathIndex?: number;
}

export interface DlSyntax {
  /** The AIs in the order read: path first, then query. */
  ais: DlAiValue[];
  /** Query parameters that are not AIs (non-numeric keys, and keys without `=`), undecoded, in order. */
  otherParams: { key: string; value?: string }[];
  /** The same data as a GS1 element string, `^` for FNC1 (as the syntax engine writes it). */
  elementString: string;
  /** Scheme, host and any path before the primary key. */
  stem: string;
}

export interface DlSyntaxError {
  /** What is wrong, in a sentence a user can act on. */
  message: string;
  /** The AI concerned, when there is one. */
  ai?: string;
  /** Its (decoded) value, when there is one. */
  value?: string;
}

export type DlSyntaxResult = { ok: true; dl: DlSyntax } | { ok: false; error: DlSyntaxError };

const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const BAD_DOMAIN_CHARACTERS = /[_~?#@!$&'()*+,;=%]/;
const MAX_AIS = 64;

/**
 * Percent-decoding as the syntax engine does it: `%XY` with two hex digits is a byte (one char here),
 * anything else stays as it is, and in a query `+` is a space. undefined when it decodes a NUL.
 */
export function unescapeUriComponent(text: string, query: boolean): string | undefined {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '%' && i < text.length - 2 && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      const byte = Number.parseInt(text.slice(i + 1, i + 3), 16);
      if (byte === 0) return undefined;
      out += String.fromCharCode(byte);
      i += 2;
    } else out += query && char === '+' ? ' ' : char;
  }
  return out;
}

/** Percent-encoding of a path value (`query` false) or a query value (space as `+`), as GS1 writes them. */
export function escapeUriComponent(text: string, query: boolean): string {
  let out = '';
  for (const char of text) {
    if (/[A-Za-z0-9\-._~]/.test(char)) out += char;
    else if (char === ' ' && query) out += '+';
    else for (const byte of new TextEncoder().encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A decoded value as a person reads it. unescapeUriComponent makes each `%XY` one byte (one char),
 * as the engine counts lengths, so `%C3%A9` is two chars here; a refusal shows the UTF-8 text
 * those bytes spell (`é`), or, when they spell none, `%XY` for each byte above 7F (`utf8`: false).
 */
function readableText(value: string): { text: string; utf8: boolean } {
  if (!/[\u0080-\u00ff]/.test(value)) return { text: value, utf8: true };
  try {
    return { text: strictUtf8.decode(Uint8Array.from(value, (char) => char.charCodeAt(0))), utf8: true };
  } catch {
    const text = value.replace(/[\u0080-\u00ff]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
    return { text, utf8: false };
  }
}

const fail = (message: string, ai?: string, value?: string): DlSyntaxResult => ({
  ok: false,
  error: { message, ...(ai !== undefined ? { ai } : {}), ...(value !== undefined ? { value: readableText(value).text } : {}) },
});

/**
 * A value's refusal said of the characters a person sent (`contains "é"`, or its length in them),
 * not of the bytes the engine read them as (`contains "Ã"`, 21 characters for 20 with an é); a byte
 * that is no UTF-8 at all is named as sent (`%FF`).
 */
function readableProblem(entry: AiEntry, value: string, problem: string): string {
  const { text, utf8 } = readableText(value);
  if (text === value) return problem;
  if (!utf8) {
    const byte = /[\u0080-\u00ff]/.exec(value)?.[0] ?? '';
    return `${describe(entry)} contains the byte %${byte.charCodeAt(0).toString(16).toUpperCase()}, which is not UTF-8 text, nor in any GS1 character set.`;
  }
  return checkAiValue(entry, text) ?? problem;
}

const describe = (entry: AiEntry) => `AI ${entry.ai}${entry.title && !entry.unknown ? ` (${entry.title})` : ''}`;

function expandZeroSuppressed(entry: AiEntry, value: string, options: DlSyntaxOptions): string {
  if (options.permitZeroSuppressedGtin && entry.ai === '01' && [8, 12, 13].includes(value.length)) return value.padStart(14, '0');
  return value;
}

/** Length and content of one AI's value, component by component. undefined when valid. */
export function checkAiValue(entry: AiEntry, value: string): string | undefined {
  const lengthProblem = checkAiValueLength(entry, value);
  if (lengthProblem) return lengthProblem;
  const name = describe(entry);
  let rest = value;
  for (const part of entry.parts) {
    const component = rest.slice(0, part.max);
    if (part.optional && component.length === 0) continue;
    if (component.length < part.min) return `${name} has the wrong length.`;
    for (const linter of [CSET_LINTERS[part.cset], ...part.linters.map((name) => LINTERS[name])]) {
      const problem = linter?.(component);
      if (problem) return `${name} ${problem}.`;
    }
    rest = rest.slice(component.length);
  }
  return rest.length > 0 ? `${name} is too long.` : undefined;
}

/** Whether an AI matching a pattern (`31nn`: n for any digit) is among the others. */
function present(pattern: string, ais: readonly string[], self: string): boolean {
  return ais.some((ai) => ai !== self && ai.length === pattern.length && [...pattern].every((c, i) => c === 'n' || c === ai[i]));
}

/** The dictionary's rules between AIs: exclusions (`ex=`), requisites (`req=`), and AI 8030 on a serialised key. */
export function checkAiAssociations(ais: readonly DlAiValue[], checkRequisites = true): DlSyntaxError | undefined {
  const list = ais.map((a) => a.ai);
  for (const { ai } of ais) {
    const entry = lookupAi(ai, true) as AiEntry;
    const clash = entry.excludes.find((pattern) => present(pattern, list, ai));
    if (clash) {
      const other = list.find((a) => a !== ai && present(clash, [a], ''));
      return { message: `AI ${ai} and AI ${other} cannot appear together.`, ai };
    }
  }
  if (checkRequisites) {
    for (const { ai } of ais) {
      const entry = lookupAi(ai, true) as AiEntry;
      for (const groups of entry.requires) {
        if (!groups.some((group) => group.every((pattern) => present(pattern, list, ai)))) {
          const needs = groups.map((group) => group.join(' with ')).join(', or ');
          return { message: `AI ${ai} needs ${groups.length > 1 ? 'one of ' : ''}AI ${needs} beside it.`, ai };
        }
      }
    }
  }
  if (list.includes('8030')) {
    for (const { ai, value } of ais) {
      const entry = lookupAi(ai, true) as AiEntry;
      const min = entry.parts.reduce((sum, part) => sum + (part.optional ? 0 : part.min), 0);
      if (['253', '255', '8003'].includes(ai) && value.length === min) {
        return { message: `AI 8030 (signature) needs AI ${ai} with its serial component.`, ai };
      }
    }
  }
  return undefined;
}

/**
 * Reads a GS1 Digital Link URI. Fails, with a message naming what is wrong, wherever the GS1 Barcode
 * Syntax Engine (with the same options) would refuse the URI.
 */
export function parseDlUri(uri: string, options: DlSyntaxOptions = {}): DlSyntaxResult {
  if (!URI_CHARACTERS.test(uri)) {
    const bad = [...uri].find((c) => !URI_CHARACTERS.test(c));
    return fail(`The link contains ${JSON.stringify(bad)}, which a URI cannot carry unencoded.`);
  }
  const scheme = /^(https?|HTTPS?):\/\//.exec(uri)?.[0];
  if (!scheme) return fail('Not a GS1 Digital Link URL: it must start with https:// or http://.');
  const afterScheme = uri.slice(scheme.length);
  const slash = afterScheme.indexOf('/');
  const domain = slash === -1 ? afterScheme : afterScheme.slice(0, slash);
  const badDomain = BAD_DOMAIN_CHARACTERS.exec(domain);
  if (badDomain) return fail(`The host contains ${JSON.stringify(badDomain[0])}, which a host name cannot.`);
  if (slash < 1) return fail('The link has no host, or no path after it.');
  let path = afterScheme.slice(slash);
  const hash = path.indexOf('#');
  if (hash !== -1) path = path.slice(0, hash);
  const question = path.indexOf('?');
  const query = question === -1 ? undefined : path.slice(question + 1);
  if (question !== -1) path = path.slice(0, question);

  const segments = path.split('/').slice(1);
  const pathAi = (text: string): AiEntry | undefined => {
    if (options.permitConvenienceAlphas && text.length >= 3 && text.length <= 5 && !/^[0-9]/.test(text)) {
      const ai = CONVENIENCE_ALPHAS[text];
      if (ai) return TABLE.get(ai);
    }
    return lookupAi(text, options.permitUnknownAIs);
  };
  // The primary key is found from the end: every pair after it must be an AI and its value.
  let start = -1;
  for (let i = segments.length - 2; i >= 0; i -= 2) {
    const entry = pathAi(segments[i] as string);
    if (!entry) break;
    if (entry.qualifiers) {
      start = i;
      break;
    }
  }
  if (start === -1) {
    return fail(
      path.endsWith('/')
        ? 'The path ends in "/", so its last AI has no value.'
        : 'The path holds no GS1 primary key (such as /01/<GTIN>) followed only by AI/value pairs.',
    );
  }

  const ais: DlAiValue[] = [];
  const entries: AiEntry[] = [];
  let elementString = '';
  let fnc1 = true;
  const add = (entry: AiEntry, value: string, pathIndex?: number) => {
    elementString += `${fnc1 ? '^' : ''}${entry.ai}${value}`;
    fnc1 = entry.fnc1;
    ais.push({ ai: entry.ai, value, ...(pathIndex !== undefined ? { pathIndex } : {}) });
    entries.push(entry);
  };
  for (let i = start; i < segments.length; i += 2) {
    const entry = pathAi(segments[i] as string) as AiEntry;
    const raw = segments[i + 1] as string;
    if (raw === '') return fail(`/${entry.ai}/ in the path has an empty value.`, entry.ai);
    const decoded = unescapeUriComponent(raw, false);
    if (decoded === undefined) return fail(`The value of ${describe(entry)} decodes to a NUL character.`, entry.ai);
    const value = expandZeroSuppressed(entry, decoded, options);
    const lengthProblem = checkAiValueLength(entry, value);
    if (lengthProblem) return fail(readableProblem(entry, value, lengthProblem), entry.ai, value);
    add(entry, value, ais.length);
  }
  const pathCount = ais.length;

  const otherParams: DlSyntax['otherParams'] = [];
  let count = pathCount;
  for (const param of (query ?? '').split('&')) {
    if (param === '') continue;
    if (count >= MAX_AIS) return fail(`The link carries more than ${MAX_AIS} AIs and parameters.`);
    count++;
    const equals = param.indexOf('=');
    if (equals === -1) {
      otherParams.push({ key: param });
      continue;
    }
    const key = param.slice(0, equals);
    const raw = param.slice(equals + 1);
    if (!/^[0-9]*$/.test(key)) {
      otherParams.push({ key, value: raw });
      continue;
    }
    const entry = lookupAi(key, options.permitUnknownAIs);
    if (!entry)
      return fail(
        key === '' ? 'A query parameter has no name before "=".' : `The query key ${key} is numeric but not a GS1 AI.`,
        key,
      );
    if (raw === '') return fail(`${describe(entry)} in the query has an empty value.`, key);
    const decoded = unescapeUriComponent(raw, true);
    if (decoded === undefined) return fail(`The value of ${describe(entry)} decodes to a NUL character.`, key);
    const value = expandZeroSuppressed(entry, decoded, options);
    const lengthProblem = checkAiValueLength(entry, value);
    if (lengthProblem) return fail(readableProblem(entry, value, lengthProblem), key, value);
    add(entry, value);
  }

  const pathAis = ais.slice(0, pathCount).map((a) => a.ai);
  if (!isValidPathSequence(pathAis)) {
    const swapped = pathAis.join(' ').replace(/ 21 10$/, ' 10 21');
    if (!(options.permitSerialBeforeBatch && isValidPathSequence(swapped.split(' ')))) {
      const key = pathAis[0] as string;
      const allowed = (TABLE.get(key)?.qualifiers ?? [])
        .map((q) => (q.length ? q.map((a) => `/${a}/`).join(' ') : 'none'))
        .join(' or ');
      return fail(
        `The path /${pathAis.join('/…/')}/… is not a valid key and qualifiers: after /${key}/ GS1 allows, in this order, ${allowed || 'no qualifiers'}.`,
        pathAis.find((_ai, i) => i > 0 && !isValidPathSequence(pathAis.slice(0, i + 1))),
      );
    }
  }

  const sorted = [...ais].sort((a, b) => (a.ai < b.ai ? -1 : a.ai > b.ai ? 1 : 0));
  for (let i = 0; i + 1 < sorted.length; i++) {
    if ((sorted[i] as DlAiValue).ai === (sorted[i + 1] as DlAiValue).ai) {
      const ai = (sorted[i] as DlAiValue).ai;
      return fail(`AI ${ai} is given twice.`, ai);
    }
  }
  for (const attribute of sorted) {
    if (attribute.pathIndex !== undefined) continue;
    const entry = entries[ais.indexOf(attribute)] as AiEntry;
    for (let j = 1; j <= pathAis.length; j++) {
      if (isValidPathSequence([...pathAis.slice(0, j), entry.ai, ...pathAis.slice(j)])) {
        return fail(`${describe(entry)} belongs in the path, as a qualifier of /${pathAis[0]}/, not in the query.`, entry.ai);
      }
    }
    if (!entry.dlAttribute && !(entry.unknown && options.permitUnknownAIsAsAttributes)) {
      return fail(`${describe(entry)} cannot be a Digital Link data attribute (query parameter).`, entry.ai);
    }
  }
  for (const [index, entry] of entries.entries()) {
    const value = (ais[index] as DlAiValue).value;
    const problem = checkAiValue(entry, value);
    if (problem) return fail(readableProblem(entry, value, problem), entry.ai, value);
  }
  const association = checkAiAssociations(ais, options.checkRequisites ?? true);
  if (association) return { ok: false, error: association };

  const stem = `${scheme}${domain}${segments
    .slice(0, start)
    .map((s) => `/${s}`)
    .join('')}`;
  return { ok: true, dl: { ais, otherParams, elementString, stem } };
}

/** The overall length check the engine makes while reading, before any content check. */
function checkAiValueLength(entry: AiEntry, value: string): string | undefined {
  const min = entry.parts.reduce((sum, part) => sum + (part.optional ? 0 : part.min), 0);
  const max = entry.parts.reduce((sum, part) => sum + part.max, 0);
  if (value.length < min) return `${describe(entry)} is too short: ${value.length} characters, at least ${min} needed.`;
  if (value.length > max) return `${describe(entry)} is too long: ${value.length} characters, at most ${max} allowed.`;
  if (value.includes('^')) return `${describe(entry)} contains ^, which GS1 data cannot carry.`;
  return undefined;
}
