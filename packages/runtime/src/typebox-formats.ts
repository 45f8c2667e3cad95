import { FormatRegistry } from '@sinclair/typebox';

/**
 * The string formats the contracts use, taught to TypeBox's checker. The gateway checks HTTP bodies
 * with Ajv and its formats; a service checks the same schema again at the bus with TypeBox, which
 * knows no format of its own and refuses every value of one it was not given ("Unknown format").
 * The rule here is Ajv's (ajv-formats' full date-time), but for one thing: a leap second (23:59:60),
 * which JavaScript's Date cannot hold, is refused. Handlers read such a value with `parseDateTime`,
 * since `new Date()` does not take every form Ajv lets through (a zone of `+01`, say).
 */

/** RFC 3339 date-time as Ajv takes it: a date, 'T' or white space, a time with seconds, a zone (Z, ±hh, ±hhmm or ±hh:mm). */
const dateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt\s](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/** The instant a date-time names, or undefined when it is not one. */
export function parseDateTime(value: string): Date | undefined {
  const parts = dateTime.exec(value);
  if (!parts) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', utc, sign, zoneHours, zoneMinutes = '00'] = parts;
  type Fields = [number, number, number, number, number, number, number, number];
  const fields = [year, month, day, hour, minute, second, zoneHours ?? '00', zoneMinutes].map(Number) as Fields;
  const [y, mo, d, h, mi, s, zh, zm] = fields;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59 || zh > 23 || zm > 59) return undefined;
  if (d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  const zone = utc ? 'Z' : `${sign}${zoneHours}:${zoneMinutes}`;
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone}`);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

export const isDateTime = (value: string): boolean => parseDateTime(value) !== undefined;

/** Registers the formats once per process; later calls change nothing. */
export function registerContractFormats(): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);
}
