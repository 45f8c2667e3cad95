/**
 * Whether the date, and the time if any, that an ISO 8601 text starting `YYYY-MM-DD` writes exist:
 * a 30th of February, a month 13, an hour 24, a minute or second 60 do not. `new Date` rolls them
 * over into the next day or month instead of refusing them, so a text is checked here before it is
 * read. The zone is not looked at (`new Date` refuses a bad one).
 */
export function writesRealDateTime(text: string): boolean {
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!date) return false;
  const [year, month, day] = date.slice(1).map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  const time = /^[Tt ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(text.slice(10));
  if (!time) return true;
  const [hour, minute, second = 0] = time.slice(1).map((part) => (part === undefined ? 0 : Number(part))) as [
    number,
    number,
    number,
  ];
  return hour <= 23 && minute <= 59 && second <= 59;
}
