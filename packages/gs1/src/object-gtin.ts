import { createHash } from 'node:crypto';
import { gs1CheckDigit } from './gtin.ts';

/**
 * The `01` value of an auction object's label: a valid GTIN-14 in GS1's restricted-circulation
 * range (indicator 0, then prefix 2: GTIN-13 prefix 20–29, for use inside one organisation), eleven
 * digits derived from the object's service serial, and the check digit (docs/AUCTION.md). So an
 * object's link is told from a brand's code by its GTIN and serial alone: verify-service needs that,
 * since code-service, which records every code it signs, has no record of objects.
 */
export function objectGtin(serial: string): string {
  const digits = (BigInt(`0x${createHash('sha256').update(serial).digest('hex').slice(0, 16)}`) % 10n ** 11n)
    .toString()
    .padStart(11, '0');
  const body = `02${digits}`;
  return `${body}${gs1CheckDigit(body)}`;
}

/** Whether a link's GTIN and serial are an auction object's label (its GTIN derived from its serial). */
export const isObjectLabel = (gtin: string, serial: string): boolean => objectGtin(serial) === gtin;
