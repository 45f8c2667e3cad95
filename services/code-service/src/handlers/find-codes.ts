import type { CodeLookup, Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findCodesByItem } from '../store/code-store.ts';

/** The codes of an item, for verify-service: which key signed each, and when each expires. */
export async function findCodes(
  db: SqlExecutor,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<{ codes: CodeLookup[] }> {
  const records = await findCodesByItem(db, environment, gtin, serial);
  return {
    codes: records.map((record) => ({
      assetId: record.assetId,
      accountId: record.accountId,
      kid: record.kid,
      batch: record.batch,
      expiry: record.expiry,
      expiresAt: record.expiresAt?.toISOString() ?? null,
      createdAt: record.createdAt.toISOString(),
      metadata: record.metadata,
    })),
  };
}
