/**
 * A GTIN-8, GTIN-12 or GTIN-13 as the GTIN-14 the API takes (zeros before it); anything else as it
 * is, for the API to refuse with INVALID_GTIN. A spreadsheet drops a GTIN-14's leading zero, which
 * this puts back; the check digit is unchanged and still checked. (packages/gs1's asGtin14, for the
 * browser.)
 */
export function asGtin14(value: string): string {
  return /^(\d{8}|\d{12}|\d{13})$/.test(value) ? value.padStart(14, '0') : value;
}
