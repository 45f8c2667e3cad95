/**
 * RFC 8785 JSON Canonicalization Scheme: object members sorted by their UTF-16 code units, no
 * whitespace, numbers in ECMAScript's shortest form, strings escaped as JSON.stringify does.
 * Throws on what JSON cannot hold (non-finite numbers, undefined, functions, lone surrogates).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS cannot hold a non-finite number');
    return Object.is(value, -0) ? '0' : String(value);
  }
  if (typeof value === 'string') {
    if (/\p{Surrogate}/u.test(value)) throw new TypeError('JCS cannot hold a lone surrogate');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${canonicalJson(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(',')}}`;
  }
  throw new TypeError(`JCS cannot hold a ${typeof value}`);
}
