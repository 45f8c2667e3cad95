/**
 * RFC 8785 JSON Canonicalization Scheme: object members sorted by their UTF-16 code units, no
 * whitespace, numbers in ECMAScript's shortest form, strings escaped as JSON.stringify does.
 * Throws on what JSON cannot hold (non-finite numbers, undefined, functions, lone surrogates).
 * Written as plain loops: every generated code is hashed this way, so it is on the batch path.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('JCS cannot hold a non-finite number');
      return Object.is(value, -0) ? '0' : String(value);
    case 'string':
      // String.prototype.isWellFormed is in Node 20 (ES2024), beyond this project's type library.
      if (!(value as string & { isWellFormed(): boolean }).isWellFormed())
        throw new TypeError('JCS cannot hold a lone surrogate');
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i += 1) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
        return `${text}]`;
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      let text = '{';
      let first = true;
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) continue;
        text += `${first ? '' : ','}${canonicalJson(key)}:${canonicalJson(member)}`;
        first = false;
      }
      return `${text}}`;
    }
    default:
      throw new TypeError(`JCS cannot hold a ${typeof value}`);
  }
}
