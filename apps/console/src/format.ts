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
