import type { GtinSigners } from '@hallmark/accounts';
import type { CodeLookup, Environment } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';
import { findAccountsCodeOfItem } from '../store/code-store.ts';

/**
 * The codes of an item for verify-service: which key signed each, and when each expires. Only the
 * code of the GTIN's signer (its owner, or the operator for a GTIN nobody owns) is answered, so
 * another tenant's code for the same item never reaches a verdict or a page; it is the only one read.
 */
export async function findCodes(
  db: SqlExecutor,
  signers: GtinSigners,
  environment: Environment,
  gtin: string,
  serial: string,
): Promise<{ signerAccountId: string | null; codes: CodeLookup[] }> {
  const signer = await signers.signerOf(environment, gtin);
  const record = signer ? await findAccountsCodeOfItem(db, signer.accountId, environment, gtin, serial) : undefined;
  return {
    signerAccountId: signer?.accountId ?? null,
    codes: record
      ? [
          {
            assetId: record.assetId,
            accountId: record.accountId,
            kid: record.kid,
            batch: record.batch,
            expiry: record.expiry,
            expiresAt: record.expiresAt?.toISOString() ?? null,
            createdAt: record.createdAt.toISOString(),
            metadata: record.metadata,
          },
        ]
      : [],
  };
}
