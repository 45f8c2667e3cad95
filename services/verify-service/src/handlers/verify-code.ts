import { randomUUID } from 'node:crypto';
import type { GtinIssuers, VerificationKeys } from '@hallmark/accounts';
import type { Cache } from '@hallmark/cache';
import { assessScan, endOfYymmdd } from '@hallmark/codes';
import {
  blockSeenByOthers,
  type CodeLookup,
  HallmarkError,
  type Principal,
  type QuickstartVerificationResult,
  riskClientOf,
  type VerificationResult,
  type VerifyCodeBody,
} from '@hallmark/contracts';
import { isObjectLabel } from '@hallmark/gs1';
import type { SqlDatabase } from '@hallmark/sql';
import type { CodeDirectory } from '../code-directory.ts';
import type { RiskRulesSource } from '../risk-rules-source.ts';
import { publicPageVerifier, type ScanRecorded } from '../scan-history.ts';
import type { ScanPublisher } from '../scan-publisher.ts';
import { type SignatureCheck, type SignedLink, signatureCheck } from './candidate-keys.ts';
import { readLink } from './read-link.ts';
import type { CodeBlocks } from './report-code.ts';

export interface VerifyDeps {
  db: SqlDatabase;
  codes: CodeDirectory;
  keys: VerificationKeys;
  /** Who the resolver page names as a GTIN's issuer (remembered briefly). */
  issuers: GtinIssuers;
  cache: Cache;
  scans: ScanPublisher;
  rules: RiskRulesSource;
  /** Codes blocked by their owner's confirmed report (handlers/report-code.ts). */
  blocks: CodeBlocks;
  clock: () => Date;
}

/**
 * Where a code's scans are counted: per signer (the GTIN's owner, or the operator), so a GTIN that
 * changes hands starts its new owner's codes afresh; the previous owner's scans of a serial used
 * again are neither shown to the new owner (firstSeen, totalScans) nor held against its code by the
 * risk rules. Counters kept before 2026-12-04 were per item alone and are not read since.
 */
export const scanSubject = (environment: string, signer: string, gtin: string, serial: string) =>
  `${environment}:${signer}:${gtin}:${serial}`;
/** Where scans of a link whose signature failed are counted: never the genuine code's counters. */
export const forgedScanSubject = (environment: string, signer: string, gtin: string, serial: string) =>
  `forged:${environment}:${signer}:${gtin}:${serial}`;

/** How long a forged link's counters are kept: the longest window a rule reads them over. */
const forgedCountersMs = (rules: { repeatWindowSeconds: number; scanWindowMinutes: number; clonedLabelWindowMinutes: number }) =>
  Math.max(rules.repeatWindowSeconds * 1000, rules.scanWindowMinutes * 60_000, rules.clonedLabelWindowMinutes * 60_000);

/**
 * The key a failed signature is said to have been checked against: the signer's newest active key,
 * whatever the serial. Naming the first candidate, the key of the serial's stored code when it has
 * one, told anyone which serials were issued once the signer had rotated its key (the old key for an
 * issued serial, the active one for any other). `checkedKid` only when the signer has no active key.
 */
async function failedKeyIdOf(deps: VerifyDeps, signer: Principal, checked: SignatureCheck, checkedKid: string): Promise<string> {
  // An item with no stored code was checked under the signer's own active keys, newest first
  // (candidate-keys.ts): the first of them is the newest, so no need to ask again.
  if (checked.item.codes.length === 0) return checkedKid;
  const [newest] = await deps.keys.unrecordedCodeKeyIds(signer);
  return newest ?? checkedKid;
}

/**
 * Whether the link is the one the service issued for `code`: the same batch and expiry, and no
 * variant (AI 22), which the service never signs. The signature covers them all, so another spelling
 * of them signed with the same key is a link the service never made.
 */
const isIssuedLink = (code: CodeLookup, link: SignedLink): boolean =>
  (link.batch ?? null) === code.batch && (link.expiry ?? null) === code.expiry && link.variant === undefined;

/**
 * POST /code/verify. Candidate keys: the key each of the signer's stored codes of the item was
 * signed with, or, for a code made elsewhere, the signer's own keys (never the caller's). COUNTERFEIT when the signature fails under
 * every candidate; KEY_NOT_FOUND when there is no candidate key at all. Every scan is counted.
 */
export async function verifyCode(
  deps: VerifyDeps,
  request: {
    principal: Principal;
    client: { keyId: string; address: string };
    body: VerifyCodeBody;
    view: 'full' | 'quickstart';
  },
  requestId: string,
  /** The signature check the resolver already made for this link in the principal's environment; never from a message. */
  checkedBefore?: SignatureCheck,
): Promise<VerificationResult | QuickstartVerificationResult> {
  const link = readLink(request.body);
  const { principal } = request;
  const now = deps.clock();
  // Only the GTIN's signer counts: its owner, or the operator for a GTIN nobody owns (docs/SIGNING.md).
  // A code made outside Hallmark is checked under the signer's own keys only (never the caller's).
  const checked = checkedBefore ?? (await signatureCheck(deps.codes, deps.keys, principal.environment, link, requestId));
  const {
    item: { codes, signerAccountId, fromCodeService },
    signer,
    keys,
    matchedKid,
  } = checked;
  const checkedKid = keys[0]?.kid;
  if (!checkedKid) {
    throw new HallmarkError('KEY_NOT_FOUND', 'No registered key could have signed this code.', {
      gtin: link.gtin,
      serial: link.serial,
    });
  }

  // The thresholds are the code owner's (its brand's compliance config); for an unknown code, the caller's.
  const owner = signer ?? principal;
  const { rules, retentionMs } = await deps.rules.rulesFor(owner, requestId);
  // Only a scan whose signature verifies counts toward the code's history (scan limit, travel,
  // clients): anyone can send forged links by the thousand. A forged scan is counted under a
  // subject of its own, so it still shows in its own counters and in the scan events.
  const forged = matchedKid === undefined;
  const scan = await deps.cache.recordScan({
    subject: (forged ? forgedScanSubject : scanSubject)(principal.environment, signerAccountId ?? '-', link.gtin, link.serial),
    atMs: now.getTime(),
    // A client is the caller's network (an IPv4 /24, an IPv6 /48: riskClientOf), whichever key or
    // page it came through: keys are free to make, so ten keys from one address (another tenant's,
    // say) would otherwise be ten clients and fake a cloned label; nor do the addresses of one cheap
    // network (a rented /24, a tunnel broker's /48) make new clients.
    client: riskClientOf(request.client.address),
    repeatWindowMs: rules.repeatWindowSeconds * 1000,
    windowMs: rules.scanWindowMinutes * 60_000,
    clientWindowMs: rules.clonedLabelWindowMinutes * 60_000,
    // Judged only against locations the same account reported: a location is whatever the caller
    // typed in, and another tenant's made-up one must not turn the owner's scan into an impossible journey.
    location: request.body.location
      ? {
          latitude: request.body.location.latitude,
          longitude: request.body.location.longitude,
          reportedBy: `${principal.environment}:${principal.accountId}`,
        }
      : undefined,
    // A forged link's counters are kept only as long as the rules' longest window: its serial is
    // whatever the sender made up, and kept for the history's retention (400 days) each made-up
    // serial held state that one address could add ten a second of, for months.
    retentionMs: forged ? Math.min(retentionMs, forgedCountersMs(rules)) : retentionMs,
  });
  const code = codes.find((candidate) => candidate.kid === matchedKid);
  // A signing key (its private half sealed in the service) vouches only for what the service issued:
  // the key got out when code-service, which stores every code before its 201, says none of this item
  // was, or when the item's code (or auction object's label) was issued with another batch, expiry or
  // variant than the link's (a leaked key relabelling an issued serial: a recalled batch as a good
  // one, an object's label with an expiry or a variant added). (A key the brand registered vouches
  // for what it signs elsewhere; code-service knows no auction object, so an object's label no
  // record has yet is judged by auction-service alone; with code-service away, the lag of the read
  // model rules.) Before 2026-12-06 an object's label was exempt from the relabelling check too: a
  // leaked signing key's label with `17` or `22` added verified AUTHENTIC, by the API and the page.
  const unissued =
    matchedKid !== undefined &&
    keys.find((key) => key.kid === matchedKid)?.type === 'signing' &&
    ((code !== undefined && !isIssuedLink(code, link)) ||
      (!isObjectLabel(link.gtin, link.serial) && codes.length === 0 && fromCodeService));
  // Blocked by its owner's confirmed report (an in-memory lookup). The cache's `reported` flag is not
  // read: flags set before reports needed the owner's review block nothing.
  const block = code ? deps.blocks.find(principal.environment, link.gtin, link.serial, code.accountId) : undefined;
  // On its owner's blocklist (handlers/blocklist.ts; in memory too): counterfeit answers COUNTERFEIT,
  // withdrawn SUSPICIOUS, both with KNOWN_COUNTERFEIT_PATTERN and the reason.
  const owningAccount = code?.accountId ?? signerAccountId;
  const listed =
    matchedKid !== undefined && owningAccount
      ? deps.blocks.findListed(principal.environment, link.gtin, link.serial, owningAccount)
      : undefined;
  // A code made elsewhere: its AI 17 read as any GS1 reader reads it (17=991231 expired in 1999).
  const expiresAt = code?.expiresAt ? Date.parse(code.expiresAt) : link.expiry ? endOfYymmdd(link.expiry, now).getTime() : null;
  const assessment = assessScan(
    {
      signatureValid: matchedKid !== undefined,
      nowMs: now.getTime(),
      expiresAtMs: expiresAt,
      scansInWindow: scan.scansInWindow,
      clientsInWindow: scan.clientsInWindow,
      reported: block !== undefined || listed !== undefined,
      unissued,
      location: request.body.location,
      previousLocation: scan.previousLocation,
    },
    rules,
  );
  if (listed?.kind === 'counterfeit') {
    assessment.verdict = 'COUNTERFEIT';
    assessment.confidence = 0.99;
  }
  // The scan event feeds the history, the analytics and the webhooks. An AUTHENTIC answer does not
  // wait for it; a SUSPICIOUS or COUNTERFEIT one does, since the brand's alert (scan.suspicious,
  // scan.counterfeit) is derived from it: no such verdict leaves before its evidence is stored.
  const { country, ...coordinates } = request.body.location ?? {};
  const scanRecorded: ScanRecorded = {
    scanId: randomUUID(),
    environment: principal.environment,
    gtin: link.gtin,
    serial: link.serial,
    ...(owningAccount ? { accountId: owningAccount } : {}),
    ...(link.batch !== undefined ? { batch: link.batch } : {}),
    ...(country ? { country } : {}),
    verdict: assessment.verdict,
    riskIndicators: assessment.riskIndicators,
    scanNumber: scan.total,
    at: now.toISOString(),
    verifiedBy: request.client.keyId === publicPageVerifier ? publicPageVerifier : principal.accountId,
    ...(request.body.location ? { location: coordinates as { latitude: number; longitude: number } } : {}),
  };
  if (assessment.verdict === 'AUTHENTIC') deps.scans.record(scanRecorded);
  else {
    try {
      await deps.scans.recordDurably(scanRecorded);
    } catch (error) {
      // Retryable: a retry verifies again and stores its scan; answering now would lose the alert.
      throw new HallmarkError('SERVICE_UNAVAILABLE', 'The scan could not be recorded; try again.', undefined, { cause: error });
    }
  }

  const checks = {
    signature: {
      passed: matchedKid !== undefined,
      keyId:
        matchedKid ??
        (await failedKeyIdOf(
          deps,
          signer ?? { accountId: keys[0]?.accountId ?? '', environment: principal.environment },
          checked,
          checkedKid,
        )),
      algorithm: 'Ed25519' as const,
    },
    format: { passed: true, standard: 'GS1_DIGITAL_LINK' as const },
  };
  const common = {
    verdict: assessment.verdict,
    confidence: assessment.confidence,
    gtin: link.gtin,
    serial: link.serial,
    ...(link.batch !== undefined ? { batch: link.batch } : {}),
    ...(block ? { confirmedReport: block } : {}),
    // The block's reason and id are the owner's notes: anyone else learns what kind of block and since when.
    ...(listed ? { blocked: owningAccount === principal.accountId ? listed : blockSeenByOthers(listed) } : {}),
  };
  const firstSeen = new Date(scan.firstSeenMs).toISOString();
  if (request.view === 'quickstart') {
    return { ...common, checks, scanNumber: scan.total, firstSeen, riskIndicators: assessment.riskIndicators };
  }
  return {
    ...common,
    checks: {
      ...checks,
      scanPattern: { passed: assessment.scanPatternPassed, scanNumber: scan.total, riskLevel: assessment.riskLevel },
    },
    metadata: { firstSeen, lastSeen: new Date(scan.lastSeenMs).toISOString(), totalScans: scan.total },
    riskIndicators: assessment.riskIndicators,
  };
}
