import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a browser asked for the verification page on behalf of another page, not to show it to
 * its reader: as an image, a script, a frame or a fetch (`Sec-Fetch-Dest` other than `document`), or
 * to prefetch it (`Sec-Purpose`, or the older `Purpose`, naming a prefetch). Such a load is never a
 * scan: any site could otherwise put a genuine code's link in an `<img>` and have each visitor's
 * browser scan it from the visitor's own address, and ten visitors within ten minutes make the code
 * look like a cloned label to every shopper (docs/RESOLVER.md, "Each view of the page is a scan,
 * once"). A top-level navigation (a phone opening the scanned link, a click on it) sends
 * `Sec-Fetch-Dest: document`; clients that are not browsers send none of these headers.
 */
export function isEmbeddedLoad(headers: IncomingHttpHeaders): boolean {
  const destination = headers['sec-fetch-dest'];
  if (destination !== undefined && destination.trim().toLowerCase() !== 'document') return true;
  const purpose = `${headers['sec-purpose'] ?? ''} ${headers.purpose ?? ''} ${headers['x-moz'] ?? ''}`.toLowerCase();
  return purpose.includes('prefetch');
}
