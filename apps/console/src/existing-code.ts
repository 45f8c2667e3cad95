// A batch row refused as DUPLICATE_SERIAL may be a code an earlier upload made (the tab closed, the
// connection lost mid-batch): the batch page then looks the serial up and lists the row with that
// code, as "existing", when the code is the very item the row asks for.

import type { CodeSummary } from './types.ts';

/** A GTIN as the API stores and filters it: 14 digits (GTIN-8, -12 and -13 padded with zeros). */
export const gtin14 = (gtin: unknown): string =>
  String(gtin ?? '')
    .trim()
    .padStart(14, '0');

/** The same keys with the same values (the metadata of a CSV row is flat: name → text). */
function sameFields(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && Object.is(a[key], b[key]));
}

/**
 * Whether `code` is what the row's body asks for: the same GTIN, serial, batch, expiry and
 * metadata. A serial reused for another item (another batch, say) is not the row's code.
 */
export function isCodeOfRow(code: CodeSummary, body: Record<string, unknown>): boolean {
  return (
    code.gtin === gtin14(body.gtin) &&
    code.serialNumber === body.serialNumber &&
    code.batchNumber === (body.batchNumber ?? null) &&
    code.expiryDate === (body.expiryDate ?? null) &&
    sameFields(code.metadata ?? {}, (body.metadata as Record<string, unknown> | undefined) ?? {})
  );
}
