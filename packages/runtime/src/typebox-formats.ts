import { FormatRegistry } from '@sinclair/typebox';

/**
 * The string formats the contracts use, taught to TypeBox's checker. The gateway checks HTTP bodies
 * with Ajv and its formats; a service checks the same schema again at the bus with TypeBox, which
 * knows no format of its own and refuses every value of one it was not given ("Unknown format").
 * Each rule here is Ajv's, but for one thing: a value must also be a time JavaScript's Date can
 * hold (a leap second, 23:59:60, is refused), since the handlers behind the bus turn it into one.
 */

/** RFC 3339 date-time: a date, 'T' (or a space), a time with seconds, and a zone (Z or ±hh:mm). */
const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2}(?:\.\d+)?)(?:[Zz]|[+-]\d{2}:\d{2})$/;

export function isDateTime(value: string): boolean {
  const parts = dateTime.exec(value);
  if (!parts) return false;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second >= 60) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day >= 1 && day <= daysInMonth && !Number.isNaN(Date.parse(value));
}

/** Registers the formats once per process; later calls change nothing. */
export function registerContractFormats(): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);
}
