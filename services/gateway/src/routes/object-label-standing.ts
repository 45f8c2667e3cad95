import type { LabelStanding, PublicVerification } from '@hallmark/contracts';

/**
 * An object's public verification with what its label's owner said of the label (verify-service's
 * objectLabelStanding): a label blocked as counterfeit is `counterfeit` (0.99); one withdrawn, or of
 * a confirmed report, is `suspicious` (0.9 where it was authentic). Both carry
 * `KNOWN_COUNTERFEIT_PATTERN`, as a scan of the label does. A test object stays a test object.
 */
export function withOwnersWord(object: PublicVerification, standing: LabelStanding): PublicVerification {
  if (object.status === 'test' || (!standing.blocked && !standing.confirmedReport)) return object;
  const counterfeit = standing.blocked?.kind === 'counterfeit';
  return {
    ...object,
    status: counterfeit ? 'counterfeit' : 'suspicious',
    confidence: counterfeit ? 0.99 : object.status === 'authentic' ? 0.9 : object.confidence,
    riskIndicators: ['KNOWN_COUNTERFEIT_PATTERN'],
    ...(standing.blocked ? { blocked: standing.blocked } : {}),
    ...(standing.confirmedReport ? { confirmedReport: standing.confirmedReport } : {}),
  };
}
