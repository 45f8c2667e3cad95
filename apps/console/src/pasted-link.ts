// A code's link pasted into the codes search: its GTIN, serial and batch, as the search takes them.
// A GS1 Digital Link's path is /01/{gtin} followed by AI/value pairs (21 serial, 10 batch, 22
// variant); whatever precedes /01/ (the resolver's origin, a path prefix) and the query (the
// signature) are not searched.

export interface PastedSearch {
  gtin: string;
  serial: string;
  batch: string;
}

/** The search a pasted link asks for; undefined for text that is no link with a GTIN (/01/ and 8 to 14 digits). */
export function searchOfPastedLink(text: string): PastedSearch | undefined {
  const path = text.trim().split(/[?#]/)[0] ?? '';
  const at = path.indexOf('/01/');
  if (at < 0) return undefined;
  const segments = path.slice(at + 1).split('/');
  const values = new Map<string, string>();
  for (let index = 0; index + 1 < segments.length; index += 2) {
    let value: string;
    try {
      value = decodeURIComponent(segments[index + 1] as string);
    } catch {
      return undefined;
    }
    values.set(segments[index] as string, value);
  }
  const gtin = values.get('01') ?? '';
  if (!/^\d{8,14}$/.test(gtin)) return undefined;
  return { gtin, serial: values.get('21') ?? '', batch: values.get('10') ?? '' };
}
