/**
 * Whole numbers a JSON text writes that a reader keeping whole numbers exactly (Python's `json`,
 * Java's BigDecimal, a person) and one reading every number as a double (JavaScript, our hashing)
 * take for different values, or that come back from us written otherwise: `90071992547409921` reads
 * as the double ...920, and `1152921504606846976` (2^60, a double) is written back
 * `1152921504606847000`. A number is written here as JavaScript writes it (JSON.stringify), so such a
 * literal is one whose double is written otherwise. Stored, the client's number would change
 * without a word; in an export, a forged digit would hash like the genuine one while another reader
 * sees it. Fractions and exponents (`0.1`, `1e21`) are doubles to every such reader, and `-0` is
 * zero to all of them.
 */

/** Sixteen digits in a row: no shorter whole number can be rounded (2^53 has 16 digits). */
const longDigitRun = /\d{16}/;

/** An integer literal as JSON writes one: no fraction, no exponent. */
const integerLiteral = /^-?\d+$/;

/**
 * The first whole-number literal of a JSON text (`text` must be valid JSON) that JavaScript writes
 * otherwise once read, with its path in the form validation errors use (`items.3.metadata.lot`).
 */
export function firstRoundedInteger(text: string): { literal: string; path: string } | undefined {
  if (!longDigitRun.test(text)) return undefined;
  /** The member name or array index each open object or array is at. */
  const path: Array<string | number> = [];
  const inArray: boolean[] = [];
  let expectingName = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    if (char === '{' || char === '[') {
      inArray.push(char === '[');
      path.push(char === '[' ? 0 : '');
      expectingName = char === '{';
    } else if (char === '}' || char === ']') {
      inArray.pop();
      path.pop();
      expectingName = false;
    } else if (char === ',') {
      if (inArray.at(-1)) path[path.length - 1] = (path.at(-1) as number) + 1;
      else expectingName = true;
    } else if (char === '"') {
      const start = at;
      for (at += 1; text[at] !== '"'; at++) if (text[at] === '\\') at += 1;
      if (expectingName) {
        path[path.length - 1] = JSON.parse(text.slice(start, at + 1)) as string;
        expectingName = false;
      }
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      let end = at + 1;
      while (end < text.length && '0123456789.eE+-'.includes(text[end] as string)) end++;
      const literal = text.slice(at, end);
      if (literal.length >= 16 && integerLiteral.test(literal) && String(Number(literal)) !== literal) {
        return { literal, path: path.map(String).join('.') };
      }
      at = end - 1;
    }
  }
  return undefined;
}
