// A batch row refused as DUPLICATE_SERIAL may be a code an earlier upload made (the tab closed, the
// connection lost mid-batch): when the person says the file was uploaded before, the batch page
// looks the serial up and lists the row with that code, as "existing", when the code is the very
// item the row asks for.

import type { CodeSummary } from './types.ts';

/** A row's item, as the API's uniqueness sees it: the GTIN and the serial. */
export const itemOf = (body: Record<string, unknown>): string => `${String(body.gtin)}\u0000${String(body.serialNumber)}`;

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
    code.gtin === body.gtin &&
    code.serialNumber === body.serialNumber &&
    code.batchNumber === (body.batchNumber ?? null) &&
    code.expiryDate === (body.expiryDate ?? null) &&
    sameFields(code.metadata ?? {}, (body.metadata as Record<string, unknown> | undefined) ?? {})
  );
}
