/**
 * A wait in words, for the messages of 429 answers: `Retry-After` and `details.retryAfterSeconds`
 * give the seconds to programs; a person reads "in 10 h 32 min (at 00:00 UTC)" better than "37933 s".
 * `resetAtMs`: when the limit's window ends, on the product's clock.
 */
export function retryInWords(seconds: number, resetAtMs: number): string {
  if (seconds < 90) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  const wait = minutes < 90 ? `${minutes} min` : `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  const at = new Date(resetAtMs).toISOString().slice(11, 16);
  return `in ${wait} (at ${at} UTC)`;
}
