import type { GtinSigners } from '@hallmark/accounts';
import type { CodeLookup, Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findCodesByItem } from '../store/code-store.ts';

/**
 * The codes of an item for verify-service: which key signed each, and when each expires. Only the
 * codes of the GTIN's signer (its owner, or the operator for a GTIN nobody owns) are answered, so
 * another tenant's code for the same item never reaches a verdict or a page.
 */
export async function findCodes(
  db: SqlExecutor,
  signers: GtinSigners,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<{ signerAccountId: string | null; codes: CodeLookup[] }> {
  const [signer, records] = await Promise.all([
    signers.signerOf(environment, gtin),
    findCodesByItem(db, environment, gtin, serial),
  ]);
  return {
    signerAccountId: signer?.accountId ?? null,
    codes: records
      .filter((record) => record.accountId === signer?.accountId)
      .map((record) => ({
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
