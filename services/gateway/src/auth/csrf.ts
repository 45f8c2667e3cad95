import { HallmarkError } from '@hallmark/contracts';
import { isSafeMethod } from '../safe-methods.ts';

// Cross-site request forgery (docs/SECURITY.md, "Console sessions"): a request authenticated by
// the session cookie and changing something must come from the console itself. The header
// `X-Hallmark-Console: 1` is one a cross-site form cannot send, and a cross-site script cannot send
// without a CORS preflight this gateway never grants; a browser's `Origin`, when it sends one, must
// be the gateway's own. Requests with x-api-key carry no ambient credential and are not checked.

export const consoleHeader = 'x-hallmark-console';

export interface CsrfRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The refusal of a cookie-authenticated request that may be forged, or undefined when it may pass.
 * `ownOrigins`: the gateway's origins (its public URL, and the scheme and host the request was made to).
 */
export function csrfRefusal(request: CsrfRequest, ownOrigins: readonly string[]): HallmarkError | undefined {
  if (isSafeMethod(request.method)) return undefined;
  if (request.headers[consoleHeader] !== '1') {
    return new HallmarkError('CSRF_REJECTED', 'A request made with the console’s session must send X-Hallmark-Console: 1.', {
      header: 'X-Hallmark-Console',
    });
  }
  return foreignOriginRefusal(request, ownOrigins);
}

/**
 * The refusal of a request whose browser said it comes from another origin (`Origin` not one of
 * ours), or undefined (ours, or no Origin: not a browser's cross-site request). Sign-in checks this
 * alone, so another site's page cannot sign its visitor in to an account of its choosing.
 */
export function foreignOriginRefusal(request: CsrfRequest, ownOrigins: readonly string[]): HallmarkError | undefined {
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  if (typeof origin === 'string' && ownOrigins.some((own) => sameOrigin(own, origin))) return undefined;
  return new HallmarkError('CSRF_REJECTED', 'A request with the console’s session must come from the console’s own origin.', {
    origin: typeof origin === 'string' ? origin.slice(0, 200) : null,
  });
}

/** Origins compared as URLs (scheme, host, port; default ports and case normalised); `null` and garbage never match. */
export function sameOrigin(own: string, origin: string): boolean {
  try {
    return new URL(own).origin === new URL(origin).origin && origin !== 'null';
  } catch {
    return false;
  }
}
