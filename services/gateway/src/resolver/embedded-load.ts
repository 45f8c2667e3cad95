import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a browser asked for the verification page on behalf of another page, not to show it to
 * its reader: as an image, a script, a frame or a fetch (`Sec-Fetch-Dest` other than `document`), to
 * prefetch it (`Sec-Purpose`, or the older `Purpose`, naming a prefetch), or in a navigation another
 * site started with no click of its reader (below). Such a load is never a
 * scan: any site could otherwise put a genuine code's link in an `<img>` and have each visitor's
 * browser scan it from the visitor's own address, and ten visitors within ten minutes make the code
 * look like a cloned label to every shopper (docs/RESOLVER.md, "Each view of the page is a scan,
 * once"). A top-level navigation (a phone opening the scanned link, a click on it) sends
 * `Sec-Fetch-Dest: document`; clients that are not browsers send none of these headers.
 */
export function isEmbeddedLoad(headers: IncomingHttpHeaders): boolean {
  const destination = headers['sec-fetch-dest'];
  if (destination !== undefined && destination.trim().toLowerCase() !== 'document') return true;
  // A navigation another site started without its reader's doing (a meta refresh, `location = …`,
  // a script's `window.open`): `Sec-Fetch-Site` cross-site or same-site, and no `Sec-Fetch-User: ?1`
  // (no user activation). It sent each visitor's browser to the page as surely as an `<img>` did
  // (the review of scan integrity, 2026-12-04). A phone opening the scanned link sends
  // `Sec-Fetch-Site: none`, kept through the printed link's redirects; a click sends `?1`.
  const site = headers['sec-fetch-site']?.trim().toLowerCase();
  if ((site === 'cross-site' || site === 'same-site') && headers['sec-fetch-user']?.trim() !== '?1') return true;
  const purpose = `${headers['sec-purpose'] ?? ''} ${headers.purpose ?? ''} ${headers['x-moz'] ?? ''}`.toLowerCase();
  return purpose.includes('prefetch');
}
