/**
 * A number of 8 to 13 digits as the GTIN-14 the API takes (zeros before it): a GTIN-8, -12 or -13,
 * or a GTIN whose leading zeros a spreadsheet dropped. Anything else as it is, for the API to refuse
 * with INVALID_GTIN. The number is unchanged, so its check digit is still checked.
 * (packages/gs1's asGtin14, for the browser.)
 */
export function asGtin14(value: string): string {
  return /^\d{8,13}$/.test(value) ? value.padStart(14, '0') : value;
}
