import { blockSeenByOthers, type LabelStanding } from '@hallmark/contracts';
import { isObjectLabel } from '@hallmark/gs1';
import type { VerifyDeps } from './verify-code.ts';

/**
 * What an auction object label's owner said of it in live, for the public look-up by serial
 * (GET /auction/public/verify/{serial}), which is no scan: the block on the owner's blocklist (its
 * kind and time, as anyone but the owner sees it) and the report the owner confirmed. The same
 * in-memory blocks a scan of the label is judged by (verify-code.ts), the owner found as a scan finds
 * it: the account the label's code is recorded under. Before (2026-12-03) the look-up answered from
 * the object's record alone, so a label its house had blocked as counterfeit read `authentic` there
 * while every scan of it said COUNTERFEIT.
 */
export async function objectLabelStanding(
  deps: Pick<VerifyDeps, 'codes' | 'blocks'>,
  request: { gtin: string; serial: string },
  requestId: string,
): Promise<LabelStanding> {
  const { gtin, serial } = request;
  if (!isObjectLabel(gtin, serial)) return {};
  const item = await deps.codes.findItem('live', gtin, serial, requestId);
  const owner = item.codes[0]?.accountId ?? item.signerAccountId;
  if (!owner) return {};
  const listed = deps.blocks.findListed('live', gtin, serial, owner);
  const confirmedReport = deps.blocks.find('live', gtin, serial, owner);
  return {
    ...(listed ? { blocked: blockSeenByOthers(listed) } : {}),
    ...(confirmedReport ? { confirmedReport } : {}),
  };
}
