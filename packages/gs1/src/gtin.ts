/** The GS1 check digit of the digits before it (mod 10, weights 3 and 1 from the right). */
export function gs1CheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    const digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    sum += i % 2 === 0 ? digit * 3 : digit;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * A number of 8 to 13 digits as a GTIN-14 (zeros before it): a GTIN-8, GTIN-12 or GTIN-13 is that
 * GTIN-14 in GS1 element strings, and a spreadsheet drops a GTIN's leading zeros, which this puts
 * back. Anything else as it is, for checkGtin14 to refuse. The number is unchanged, so its check
 * digit is still checked.
 */
export function asGtin14(value: string): string {
  return /^\d{8,13}$/.test(value) ? value.padStart(14, '0') : value;
}

export type GtinCheck =
  | { ok: true }
  | { ok: false; reason: 'format'; message: string }
  | { ok: false; reason: 'check-digit'; message: string; expected: string };

/** A GTIN-14: exactly 14 digits whose last is the GS1 check digit of the first 13. */
export function checkGtin14(gtin: string): GtinCheck {
  if (!/^\d{14}$/.test(gtin)) {
    return { ok: false, reason: 'format', message: `a GTIN is exactly 14 digits; got ${gtin.length} characters` };
  }
  const expected = gs1CheckDigit(gtin.slice(0, 13));
  if (Number(gtin[13]) !== expected) {
    return {
      ok: false,
      reason: 'check-digit',
      message: `the check digit is ${gtin[13]}, but the first 13 digits call for ${expected}`,
      expected: `${gtin.slice(0, 13)}${expected}`,
    };
  }
  return { ok: true };
}
