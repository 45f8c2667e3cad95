/**
 * An example value for a JSON Schema, so that every request and response body in the OpenAPI
 * document has one by construction (a new route gets examples without anyone writing them).
 *
 * A schema's own `examples`/`default`/`const`/`enum` win; otherwise a value is made from its type,
 * format, bounds and simple patterns. A string whose pattern is beyond the small generator below
 * throws `NoExampleError` naming the schema's path: give that schema `examples: [...]` (TypeBox:
 * `Type.String({ pattern, examples: ['…'] })`). openapi.unit.test.ts checks every example against
 * its schema.
 */
export class NoExampleError extends Error {
  constructor(
    readonly at: string,
    reason: string,
  ) {
    super(`No example can be made for ${at}: ${reason}. Give that schema \`examples: [...]\`.`);
  }
}

type Schema = Record<string, unknown>;

const fixedTimestamp = '2026-01-15T09:30:00.000Z';
const formatExamples: Record<string, string> = {
  'date-time': fixedTimestamp,
  date: '2026-01-15',
  time: '09:30:00Z',
  uuid: '0b6f4a52-3c1e-4d8a-9f27-5e1a2b3c4d5e',
  uri: 'https://id.example.com/01/09506000134352',
  url: 'https://id.example.com/01/09506000134352',
  'uri-reference': '/01/09506000134352',
  email: 'ops@example.com',
  hostname: 'id.example.com',
  ipv4: '192.0.2.1',
};

export function exampleOf(schema: unknown, at = '#'): unknown {
  if (typeof schema !== 'object' || schema === null) return {};
  const s = schema as Schema;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = s[keyword];
    if (Array.isArray(branches) && branches.length > 0) {
      // A nullable value shows its non-null form.
      const index = branches.findIndex((branch) => (branch as Schema).type !== 'null');
      return exampleOf(branches[Math.max(0, index)], `${at}/${keyword}/${Math.max(0, index)}`);
    }
  }
  if (Array.isArray(s.allOf)) {
    return Object.assign({}, ...s.allOf.map((part, index) => exampleOf(part, `${at}/allOf/${index}`) as object));
  }
  // if/then/else: the `else` branch is the form a body takes without the condition's field.
  if (s.else !== undefined) return exampleOf(s.else, `${at}/else`);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object':
      return objectExample(s, at);
    case 'array': {
      const item = exampleOf(s.items, `${at}/items`);
      const count = Math.max(1, Number(s.minItems ?? 1));
      if (s.uniqueItems && count > 1) throw new NoExampleError(at, 'an array of several unique items');
      return Array.from({ length: count }, () => item);
    }
    case 'string':
      return stringExample(s, at);
    case 'integer':
    case 'number':
      return numberExample(s, type);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      // No type (TypeBox's Unknown): any value; an empty object stands for it.
      return {};
  }
}

function objectExample(s: Schema, at: string): Record<string, unknown> {
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const example: Record<string, unknown> = {};
  // Optional fields are shown too, so a reader sees what can be sent; a schema whose optional
  // fields exclude each other gives its own `examples`.
  for (const [name, property] of Object.entries(properties)) example[name] = exampleOf(property, `${at}/properties/${name}`);
  return example;
}

function numberExample(s: Schema, type: 'integer' | 'number'): number {
  const minimum = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
  const maximum =
    typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : undefined;
  const value = maximum !== undefined && maximum < minimum ? maximum : Math.max(minimum, 1);
  const bounded = maximum !== undefined ? Math.min(value, maximum) : value;
  return type === 'integer' ? Math.ceil(bounded) : bounded;
}

function stringExample(s: Schema, at: string): string {
  if (s.contentEncoding === 'binary') return '<binary>';
  let value: string;
  if (typeof s.format === 'string' && formatExamples[s.format]) {
    value = formatExamples[s.format] as string;
  } else if (typeof s.pattern === 'string') {
    const made = fromPattern(s.pattern);
    if (made === undefined) throw new NoExampleError(at, `the pattern ${s.pattern} is beyond the example generator`);
    value = made;
  } else {
    value = 'example';
  }
  const minLength = Number(s.minLength ?? 0);
  const maxLength = Number(s.maxLength ?? Number.POSITIVE_INFINITY);
  if (s.pattern === undefined && s.format === undefined) {
    while (value.length < minLength) value += 'x';
    if (value.length > maxLength) value = value.slice(0, Math.max(maxLength, 1));
  }
  if (value.length < minLength || value.length > maxLength) {
    throw new NoExampleError(at, `the made example ${JSON.stringify(value)} does not fit the length bounds`);
  }
  return value;
}

/**
 * A string matching a simple anchored pattern: a sequence of literal characters, escapes and
 * character classes, each with an optional `{n}`, `{n,m}`, `+`, `*` or `?`, and optional groups
 * `(…)?` (left out). Anything else (alternation, lookarounds, nested groups): undefined.
 */
export function fromPattern(pattern: string): string | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  const body = pattern.slice(1, -1);
  let out = '';
  let i = 0;
  while (i < body.length) {
    let atom: string | undefined;
    const c = body[i] as string;
    if (c === '(') {
      const close = body.indexOf(')', i);
      if (close < 0 || body[close + 1] !== '?' || body.slice(i + 1, close).includes('(')) return undefined;
      i = close + 2;
      continue;
    }
    if (c === '[') {
      const close = body.indexOf(']', i + 2);
      if (close < 0) return undefined;
      atom = firstOfClass(body.slice(i + 1, close));
      i = close + 1;
    } else if (c === '\\') {
      const next = body[i + 1];
      atom = next === 'd' ? '0' : next === 'w' ? 'a' : next === 's' ? ' ' : next && /[^A-Za-z0-9]/.test(next) ? next : undefined;
      i += 2;
    } else if (/[|.)*+?{}$^]/.test(c)) {
      return undefined;
    } else {
      atom = c;
      i += 1;
    }
    if (atom === undefined) return undefined;
    let count = 1;
    const quantifier = /^(\{(\d+)(,(\d*))?\}|[+*?])/.exec(body.slice(i));
    if (quantifier) {
      i += quantifier[0].length;
      count = quantifier[2] !== undefined ? Number(quantifier[2]) : quantifier[0] === '+' ? 1 : 0;
      if (quantifier[0] === '?' || quantifier[0] === '*') count = 0;
    }
    out += atom.repeat(count);
  }
  return out;
}

/** A character a class like `A-Za-z0-9_-` or `!#$&^_.+-` admits; a negated class: undefined. */
function firstOfClass(inner: string): string | undefined {
  if (inner.startsWith('^')) return undefined;
  // Prefer a letter or digit the class admits, so examples read naturally.
  for (const candidate of ['a', 'A', '0']) {
    const rangePattern = new RegExp(`^[${inner}]$`);
    if (rangePattern.test(candidate)) return candidate;
  }
  const first = inner[0] === '\\' ? inner[1] : inner[0];
  return first;
}
