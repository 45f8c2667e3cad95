// How the console writes times, counts and risk flags.

const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** `25 Nov 2026, 08:03 UTC`; a dash for no time. */
export function formatTime(iso: string | null | undefined, none = '—'): string {
  if (!iso) return none;
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : `${dateTime.format(time)} UTC`;
}

export const formatCount = (count: number) => count.toLocaleString('en-GB');

const flagWords: Readonly<Record<string, string>> = {
  EXCESSIVE_SCANS: 'Scanned too often',
  GEOGRAPHIC_IMPOSSIBILITY: 'Impossible travel between scans',
  KNOWN_COUNTERFEIT_PATTERN: 'Known counterfeit pattern (blocked or reported)',
  EXPIRED_CODE: 'Code expired',
};

/** A risk indicator in words, with its code for searching the docs. */
export const flagInWords = (flag: string) => flagWords[flag] ?? flag;

export const verdictWords: Readonly<Record<string, string>> = {
  AUTHENTIC: 'Authentic',
  SUSPICIOUS: 'Suspicious',
  COUNTERFEIT: 'Counterfeit',
};

/**
 * Who asked for a scan, in words (`scannedBy`, docs/API.md): another account's location and country
 * are its word alone, so the console says whose scan it was. Absent from gateways before 2026-12-05.
 */
export function scannedByWords(scannedBy: string | undefined): string {
  // The account's own keys; the public page's views before 2026-12-05 were recorded so too.
  if (scannedBy === 'owner') return 'Your account';
  if (scannedBy === 'public') return 'Public page';
  if (scannedBy === 'other') return 'Another account';
  return '—';
}

/** Why a scan was flagged, in words: the rules that fired, with the travel speed where one was measured. */
export function scanReasons(scan: { riskIndicators: string[]; travelKm?: number | null; travelKmh?: number | null }): string[] {
  return scan.riskIndicators.map((flag) =>
    flag === 'GEOGRAPHIC_IMPOSSIBILITY' && typeof scan.travelKmh === 'number'
      ? `${flagInWords(flag)} (${formatCount(Math.round(scan.travelKm ?? 0))} km at ${formatCount(Math.round(scan.travelKmh))} km/h)`
      : flagInWords(flag),
  );
}

/**
 * Text someone else wrote, set in a sentence of ours that is a plain string (a notice): between
 * FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE, as `<bdi>` does in markup, with the isolate
 * controls it holds itself taken out (a POP of its own would end ours early), so a direction override
 * in it reorders nothing after it.
 */
export const isolated = (text: string): string => `\u2068${text.replace(/[\u2066-\u2069]/g, '')}\u2069`;
