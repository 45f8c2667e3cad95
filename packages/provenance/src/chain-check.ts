import { type ChainedRecord, hashProvenanceRecord } from './provenance-record.ts';

export type ChainBreak =
  | { reason: 'HASH_MISMATCH'; sequence: number; expected: string; stored: string }
  | { reason: 'PREV_HASH_MISMATCH'; sequence: number; expected: string | null; stored: string | null }
  | { reason: 'SEQUENCE_GAP'; sequence: number; expected: number }
  | { reason: 'OWNER_MISMATCH'; sequence: number };

export interface ChainCheck {
  isValid: boolean;
  eventCount: number;
  /** The hash of the last event, as stored. */
  headHash: string | null;
  brokenAt?: ChainBreak;
}

/** A streaming chain check: feed records in sequence order, then read the result. */
export function createChainChecker() {
  let count = 0;
  let previous: ChainedRecord | undefined;
  let broken: ChainBreak | undefined;
  return {
    add(record: ChainedRecord): void {
      count += 1;
      if (broken) {
        previous = record;
        return;
      }
      const expectedSequence = (previous?.sequence ?? 0) + 1;
      const expectedPrev = previous?.hash ?? null;
      if (record.sequence !== expectedSequence) {
        broken = { reason: 'SEQUENCE_GAP', sequence: record.sequence, expected: expectedSequence };
      } else if (
        previous &&
        (record.assetId !== previous.assetId ||
          record.accountId !== previous.accountId ||
          record.environment !== previous.environment)
      ) {
        broken = { reason: 'OWNER_MISMATCH', sequence: record.sequence };
      } else if (record.prevHash !== expectedPrev) {
        broken = { reason: 'PREV_HASH_MISMATCH', sequence: record.sequence, expected: expectedPrev, stored: record.prevHash };
      } else {
        const expected = hashProvenanceRecord(record);
        if (expected !== record.hash)
          broken = { reason: 'HASH_MISMATCH', sequence: record.sequence, expected, stored: record.hash };
      }
      previous = record;
    },
    result(): ChainCheck {
      return { isValid: !broken, eventCount: count, headHash: previous?.hash ?? null, ...(broken ? { brokenAt: broken } : {}) };
    },
  };
}

export function verifyChain(records: Iterable<ChainedRecord>): ChainCheck {
  const checker = createChainChecker();
  for (const record of records) checker.add(record);
  return checker.result();
}
