/**
 * Whole numbers a JSON text writes that come back from a double as another number: `90071992547409921`
 * (or `90071992547409921.0`, `9.0071992547409921e16`) is read as the double ...920, and
 * `1152921504606846976` (2^60, a double) is written back `1152921504606847000`. A reader that keeps
 * whole numbers exactly (Python's `json`, Java's BigDecimal, a person) and one that reads every number
 * as a double (JavaScript, our hashing) then take the text for different values. Stored, the client's
 * number would change without a word; in an export, a forged digit would hash like the genuine one
 * while another reader sees it. What is compared is the literal's exact value and that of what
 * JavaScript writes for its double (`String`, as JSON.stringify does): `1e21`, `1e23` and `1.5e300`
 * come back as written, and fractions (`0.1`) are doubles to every such reader.
 */

/** Sixteen digits, a decimal point perhaps among them: a number written with fewer comes back as written. */
const manyDigits = /\d(?:\.?\d){15}/;

/** A JSON number literal, its parts. */
const numberLiteral = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * A number literal's exact value, written one way: its digits without leading or trailing zeros and
 * the power of ten they are multiplied by (`-12e3` for -12000, `5e-1` for 0.5, `0` for -0);
 * undefined for what is not a literal.
 */
function exactValueOf(literal: string): string | undefined {
  const parts = numberLiteral.exec(literal);
  if (!parts) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = parts;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  let scale = Number(exponent) - fraction.length;
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  scale += trailing;
  return digits === '' ? '0' : `${sign}${digits}e${scale}`;
}

/** Whether a number literal is a whole number that JavaScript writes back as another number. */
function comesBackOtherwise(literal: string): boolean {
  const read = Number(literal);
  // Below 2^53 every whole number is a double; a fraction is a double to every reader.
  if (!Number.isFinite(read) || !Number.isInteger(read) || Math.abs(read) < 2 ** 53) return false;
  const exact = exactValueOf(literal);
  const whole = exact !== undefined && !exact.includes('e-');
  return whole && exact !== exactValueOf(String(read));
}

/**
 * The first number literal of a JSON text (`text` must be valid JSON) that comes back from a double
 * as another whole number, with its path in the form validation errors use (`items.3.metadata.lot`).
 */
export function firstRoundedInteger(text: string): { literal: string; path: string } | undefined {
  if (!manyDigits.test(text)) return undefined;
  return firstNumberLiteral(text, (literal) => literal.length >= 16 && comesBackOtherwise(literal));
}

/**
 * The first number literal of a JSON text (`text` must be valid JSON) whose exact value is not that
 * of its double as JavaScript writes it (`String`, as JSON.stringify does), with its path. A text
 * every number of which JSON.stringify wrote (an export of the service) has none; in one that has,
 * a number was written by someone else, and a reader of doubles (the hashes) and one of decimals (a
 * person, Python's Decimal) read different numbers: `90071992547409921.000000001` is the double
 * …920, and `0.10000000000000001` is 0.1. `1.0`, `1E2` or `-0` have their double's value and pass.
 */
export function firstInexactNumber(text: string): { literal: string; path: string } | undefined {
  return firstNumberLiteral(text, (literal) => exactValueOf(literal) !== exactValueOf(String(Number(literal))));
}

/** The first number literal of a JSON text that `flagged` picks, with its path (`items.3.metadata.lot`). */
function firstNumberLiteral(text: string, flagged: (literal: string) => boolean): { literal: string; path: string } | undefined {
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
      if (flagged(literal)) return { literal, path: path.map(String).join('.') };
      at = end - 1;
    }
  }
  return undefined;
}
