import type { IncomingHttpHeaders } from 'node:http';
import { sameOrigin } from '../auth/csrf.ts';

/**
 * Whether a browser sent the verification page's report form on behalf of another site: any page
 * can post a form to the resolver, top level or into a hidden frame, and have each visitor's browser
 * file a report from the visitor's own address, which the per-address limit does not stop (every
 * visitor is a new address); the brand's review queue, the only channel for shoppers' real reports,
 * would fill with them. The page's own form is a same-origin, top-level post: `Sec-Fetch-Site:
 * same-origin`, `Sec-Fetch-Dest: document` and `Origin` one of ours. Clients that are not browsers
 * send none of these headers, and stay limited per address. (The same rule for scans: embedded-load.ts.)
 */
export function isCrossSiteForm(headers: IncomingHttpHeaders, ownOrigins: readonly string[]): boolean {
  const destination = headers['sec-fetch-dest'];
  if (destination !== undefined && destination.trim().toLowerCase() !== 'document') return true;
  // The browser's own word, whatever the page's referrer policy made of `Origin` (`null` under no-referrer).
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site.trim().toLowerCase() !== 'same-origin';
  // A browser without Fetch Metadata: the page's policy (same-origin) lets its form send its origin.
  const origin = headers.origin;
  return origin !== undefined && !ownOrigins.some((own) => sameOrigin(own, origin));
}
