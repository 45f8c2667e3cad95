import { type CacheEpochs, fixedCacheEpochs, type VerificationKeys } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import { verifyCodeSignatureForRequest } from '@hallmark/codes';
import {
  broadcasts,
  type CodeLookup,
  type CodeReport,
  type CodeReportList,
  type CodeReportView,
  type ConfirmedReport,
  type DecideReportBody,
  decodeCursor,
  type Environment,
  encodeCursor,
  HallmarkError,
  type ListCodeReportsQuery,
  type Principal,
  type ReportCodeBody,
  type ReportStatus,
} from '@hallmark/contracts';
import { uuidV7 } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { accountStream, appendToAssetHistory } from '@hallmark/provenance';
import type { Logger } from '@hallmark/runtime';
import { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';
import type { CodeDirectory } from '../code-directory.ts';
import { createBlocklistCache } from './blocklist-cache.ts';
import { readLink } from './read-link.ts';

// Reports (issue #16): anyone may report a code, but only the code's owner decides. A report is
// stored as `pending` in the queue of the account whose stored code the link's signature verifies
// under; it changes no verdict. The owner's confirmation blocks the code (its verifications say
// SUSPICIOUS, KNOWN_COUNTERFEIT_PATTERN, with the reason); a dismissal closes the report. Both are
// appended to the code's asset history. A link that no stored code signed is refused: it is
// already answered COUNTERFEIT, and filing it by GTIN alone would let anyone fill a brand's queue.

export interface ReportDeps {
  db: SqlDatabase;
  codes: CodeDirectory;
  keys: VerificationKeys;
  blocks: CodeBlocks;
  eventStore: EventStore;
  bus: Bus;
  clock: () => Date;
}

type Link = ReturnType<typeof readLink>;

/** The stored code whose signature the link carries, looking in each environment in turn. */
async function signedCodeOf(
  deps: Pick<ReportDeps, 'codes' | 'keys'>,
  link: Link,
  environments: readonly Environment[],
  requestId: string,
): Promise<{ environment: Environment; code: CodeLookup } | undefined> {
  for (const environment of environments) {
    for (const code of await deps.codes.find(environment, link.gtin, link.serial, requestId)) {
      const key = await deps.keys.find(code.kid, { accountId: code.accountId, environment });
      if (!key || key.status === 'revoked' || key.environment !== environment) continue;
      const fields = {
        kid: code.kid,
        gtin: link.gtin,
        serial: link.serial,
        batch: link.batch,
        variant: link.variant,
        expiry: link.expiry,
      };
      if (await verifyCodeSignatureForRequest(key.keyObject, fields, link.signature)) return { environment, code };
    }
  }
  return undefined;
}

/**
 * Files a pending report: `code.reported` in the owner's account stream (what webhooks announce)
 * with the report's row written in that append's transaction, so neither exists without the other.
 */
async function insertReport(
  deps: Pick<ReportDeps, 'db' | 'eventStore'>,
  report: {
    reportId: string;
    owner: Principal;
    code: CodeLookup;
    link: Link;
    reason: string | null;
    source: 'api' | 'resolver';
    reporterAccountId: string | null;
    reportedByKey: string;
    reportedAt: Date;
  },
): Promise<void> {
  const event = {
    type: 'code.reported',
    data: {
      reportId: report.reportId,
      assetId: report.code.assetId,
      gtin: report.link.gtin,
      serial: report.link.serial,
      reason: report.reason,
      source: report.source,
      reportedAt: report.reportedAt.toISOString(),
    },
  };
  await deps.eventStore.append(accountStream(report.owner), [event], {
    expectedVersion: 'any',
    readModels: { db: deps.db, write: (sql) => insertReportRow(sql, report) },
  });
}

async function insertReportRow(sql: SqlExecutor, report: Parameters<typeof insertReport>[1]): Promise<void> {
  await sql.query(
    `INSERT INTO code_reports (report_id, owner_account_id, environment, gtin, serial, asset_id, reason, source,
                               reporter_account_id, reported_by_key, reported_at, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending')`,
    [
      report.reportId,
      report.owner.accountId,
      report.owner.environment,
      report.link.gtin,
      report.link.serial,
      report.code.assetId,
      report.reason,
      report.source,
      report.reporterAccountId,
      report.reportedByKey,
      report.reportedAt,
    ],
  );
}

const newReportId = () => `rep_${uuidV7().replaceAll('-', '')}`;

/**
 * POST /code/report: a pending report in the queue of the code's owner (the code in the caller's
 * environment that signed the link). NOT_FOUND when no stored code signed the link.
 */
export async function reportCode(
  deps: ReportDeps,
  request: { principal: Principal; client: { keyId: string; address: string }; body: ReportCodeBody },
  requestId: string,
): Promise<CodeReport> {
  const link = readLink(request.body);
  if ((request.body.reason?.length ?? 0) > 1000)
    throw new HallmarkError('VALIDATION_ERROR', 'The reason is longer than 1000 characters.');
  const { principal } = request;
  const signed = await signedCodeOf(deps, link, [principal.environment], requestId);
  if (!signed) {
    throw new HallmarkError(
      'NOT_FOUND',
      'No code issued here carries this signature, so there is no owner to report it to; verifying it answers COUNTERFEIT.',
      { gtin: link.gtin, serial: link.serial },
    );
  }
  const reportId = newReportId();
  const now = deps.clock();
  await insertReport(deps, {
    reportId,
    owner: { accountId: signed.code.accountId, environment: signed.environment },
    code: signed.code,
    link,
    reason: request.body.reason ?? null,
    source: 'api',
    reporterAccountId: principal.accountId,
    reportedByKey: request.client.keyId,
    reportedAt: now,
  });
  return { reportId, gtin: link.gtin, serial: link.serial, status: 'pending', reportedAt: now.toISOString() };
}

/**
 * A shopper's report from the resolver page: pending in the owner's queue, as any report, of a live
 * code only (a test code's page offers no form and says it is no real product: a test claim is
 * nobody's word to shoppers, docs/RESOLVER.md; before 2026-12-04 a post made up for one was filed).
 * `recorded: false` when no stored live code signed the link.
 */
export async function publicReport(
  deps: ReportDeps,
  request: { url: string; reason?: string | undefined },
  requestId: string,
): Promise<{ recorded: boolean }> {
  const link = readLink({ url: request.url });
  const signed = await signedCodeOf(deps, link, ['live'], requestId);
  if (!signed) return { recorded: false };
  await insertReport(deps, {
    reportId: newReportId(),
    owner: { accountId: signed.code.accountId, environment: signed.environment },
    code: signed.code,
    link,
    reason: request.reason ?? null,
    source: 'resolver',
    reporterAccountId: null,
    reportedByKey: 'public-resolver',
    reportedAt: deps.clock(),
  });
  return { recorded: true };
}

interface ReportRow {
  report_id: string;
  status: ReportStatus;
  source: 'api' | 'resolver';
  gtin: string;
  serial: string;
  asset_id: string;
  reason: string | null;
  reported_at: Date | string;
  reported_us: string;
  decided_at: Date | string | null;
  decision_reason: string | null;
  lifted_at: Date | string | null;
  lift_reason: string | null;
}

const reportColumns = `report_id, status, source, gtin, serial, asset_id, reason, reported_at, decided_at, decision_reason,
  lifted_at, lift_reason, ${cursorMicroseconds('reported_at')} AS reported_us`;

const iso = (value: Date | string) => new Date(value).toISOString();

function viewOf(row: ReportRow): CodeReportView {
  return {
    reportId: row.report_id,
    status: row.status,
    source: row.source,
    gtin: row.gtin,
    serial: row.serial,
    assetId: row.asset_id,
    reason: row.reason,
    reportedAt: iso(row.reported_at),
    decidedAt: row.decided_at === null ? null : iso(row.decided_at),
    // Only the owner's words are published: a reporter (anyone) never writes what verifications show.
    blockReason: row.status === 'confirmed' ? row.decision_reason : null,
    liftedAt: row.lifted_at === null ? null : iso(row.lifted_at),
    liftReason: row.lift_reason,
    dismissReason: row.status === 'dismissed' ? row.decision_reason : null,
  };
}

/** GET /code/reports: the owner's queue, newest first, cursor-paged, by status. */
export async function listCodeReports(db: SqlDatabase, owner: Principal, query: ListCodeReportsQuery): Promise<CodeReportList> {
  const limit = query.limit ?? 20;
  const [afterUs, afterId] = query.cursor ? decodeCursor(query.cursor, [cursorMicrosecondsPattern, /^rep_[0-9a-f]{1,40}$/]) : [];
  const params: unknown[] = [owner.accountId, owner.environment, limit + 1];
  let filter = '';
  if (query.status) {
    params.push(query.status);
    filter += ` AND status = $${params.length}`;
  }
  if (afterUs && afterId) {
    params.push(afterUs, afterId);
    filter += ` AND (reported_at, report_id) < (${cursorTime(`$${params.length - 1}`)}, $${params.length})`;
  }
  const rows = await db.query<ReportRow>(
    `SELECT ${reportColumns} FROM code_reports WHERE owner_account_id = $1 AND environment = $2${filter}
     ORDER BY reported_at DESC, report_id DESC LIMIT $3`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const hasMore = rows.length > limit;
  return {
    reports: page.map(viewOf),
    pagination: { limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.reported_us, last.report_id]) : null },
  };
}

const notFound = (reportId: string) => new HallmarkError('NOT_FOUND', `Report ${reportId} was not found.`, { reportId });
const alreadyDecided = (reportId: string, status: string) =>
  new HallmarkError('CONFLICT', `Report ${reportId} is already ${status}.`, { reportId, status });
const notConfirmed = (reportId: string, status: string) =>
  new HallmarkError('CONFLICT', `Report ${reportId} is ${status}: only a confirmed report's block can be lifted.`, {
    reportId,
    status,
  });

type Decision = 'confirm' | 'dismiss' | 'lift';

/** A confirmation or dismissal records the decision; a lift records itself beside the confirmation. */
const recordsDecision = 'decided_at = $5, decided_by_key = $6, decision_reason = $7';
const recordsLift = 'lifted_at = $5, lifted_by_key = $6, lift_reason = $7';

/** What each decision needs of the report, makes of it, records in its row and appends to the code's history. */
const decisions: Record<
  Decision,
  { from: ReportStatus; to: ReportStatus; records: string; event: string; refused: typeof alreadyDecided }
> = {
  confirm: {
    from: 'pending',
    to: 'confirmed',
    records: recordsDecision,
    event: 'code.report-confirmed',
    refused: alreadyDecided,
  },
  dismiss: {
    from: 'pending',
    to: 'dismissed',
    records: recordsDecision,
    event: 'code.report-dismissed',
    refused: alreadyDecided,
  },
  lift: { from: 'confirmed', to: 'lifted', records: recordsLift, event: 'code.report-lifted', refused: notConfirmed },
};

/**
 * POST /code/reports/{reportId}/confirm and …/dismiss, by the code's owner only (another account's
 * report is NOT_FOUND, as an unknown one): only a pending report can be decided (else CONFLICT).
 * …/lift lifts the block of a confirmed report (a confirmation made in error; else CONFLICT): the
 * report becomes `lifted`, its confirmation kept beside the lift. Each decision is appended to the
 * code's asset history (`code.report-confirmed`, `code.report-dismissed`, `code.report-lifted`)
 * with the report's row written in that append's transaction by a conditional update: the decision
 * is stored with its event or not at all, and of two racing decisions one wins (the other is a
 * CONFLICT that stores nothing). Confirming blocks the code on every verify-service replica;
 * lifting unblocks it there, unless another confirmed report of it still blocks it.
 */
export async function decideCodeReport(
  deps: Pick<ReportDeps, 'db' | 'eventStore' | 'blocks' | 'bus' | 'clock'>,
  request: {
    principal: Principal;
    client: { keyId: string; address: string };
    reportId: string;
    decision: Decision;
    body: DecideReportBody;
  },
  requestId: string,
): Promise<CodeReportView> {
  const { principal, reportId, decision } = request;
  const { from, to, records, event, refused } = decisions[decision];
  const now = deps.clock();
  const reason = request.body.reason ?? null;
  const [report] = await deps.db.query<ReportRow>(
    `SELECT ${reportColumns} FROM code_reports WHERE report_id = $1 AND owner_account_id = $2 AND environment = $3`,
    [reportId, principal.accountId, principal.environment],
  );
  if (!report) throw notFound(reportId);
  if (report.status !== from) throw refused(reportId, report.status);
  let row: ReportRow | undefined;
  const eventData =
    decision === 'lift'
      ? { reportId, gtin: report.gtin, serial: report.serial, reason, liftedBy: request.client.keyId }
      : {
          reportId,
          gtin: report.gtin,
          serial: report.serial,
          source: report.source,
          reportReason: report.reason,
          reason,
          decidedBy: request.client.keyId,
        };
  await appendToAssetHistory(
    deps.eventStore,
    { assetId: report.asset_id, owner: principal },
    [{ type: event, data: eventData, metadata: { requestId } }],
    {
      now: () => now,
      // The decision is stored with its event or not at all; of two racing decisions one wins.
      readModels: {
        db: deps.db,
        async write(sql) {
          [row] = await sql.query<ReportRow>(
            `UPDATE code_reports SET status = $4, ${records}
              WHERE report_id = $1 AND owner_account_id = $2 AND environment = $3 AND status = $8
              RETURNING ${reportColumns}`,
            [reportId, principal.accountId, principal.environment, to, now, request.client.keyId, reason, from],
          );
          if (!row) {
            const [decided] = await sql.query<{ status: string }>('SELECT status FROM code_reports WHERE report_id = $1', [
              reportId,
            ]);
            throw refused(reportId, decided?.status ?? 'decided');
          }
        },
      },
    },
  );
  if (!row) throw new Error(`report ${reportId} was decided without its row`);
  const view = viewOf(row);
  const code = { environment: principal.environment, gtin: row.gtin, serial: row.serial, ownerAccountId: principal.accountId };
  if (decision === 'confirm') {
    const block: BlockedCode = { reportId, ...code, reason: view.blockReason, confirmedAt: view.decidedAt as string };
    deps.blocks.add(block);
    await deps.bus.broadcast(broadcasts.codeBlocked, block);
  }
  if (decision === 'lift') {
    // The lift is stored: tell every replica first, then read this one's blocks again before
    // answering. A read that fails is left to the periodic one; the answer is still the lift.
    deps.blocks.lifted(reportId);
    await deps.bus.broadcast(broadcasts.codeBlockLifted, { reportId, ...code });
    await deps.blocks.reload().catch(() => undefined);
  }
  return view;
}

interface BlockedCode {
  /** The confirmed report that blocks the code (absent in broadcasts of the release before). */
  reportId?: string;
  environment: Environment;
  gtin: string;
  serial: string;
  ownerAccountId: string;
  reason: string | null;
  confirmedAt: string;
}

/** A code's block as verifiers are shown it, and the confirmed report it is (absent in broadcasts of the release before). */
interface ShownBlock {
  shown: ConfirmedReport;
  reportId: string | undefined;
}

const blockKey = (environment: string, gtin: string, serial: string, ownerAccountId: string) =>
  `${environment}\n${gtin}\n${serial}\n${ownerAccountId}`;

/** The owner a `codes.blocklist-changed` broadcast names, if it names one as blocklist.ts sends it. */
function ownerOfBroadcast(payload: unknown): Principal | undefined {
  const { accountId, environment } = (payload ?? {}) as { accountId?: unknown; environment?: unknown };
  if (typeof accountId !== 'string' || (environment !== 'live' && environment !== 'test')) return undefined;
  return { accountId, environment };
}

/**
 * The codes their owners blocked, held in memory by every verify-service replica so verification
 * looks them up without a round trip: read whole from the confirmed reports (the record) at start,
 * when the `code_blocks` cache epoch moves (every decision bumps it in its transaction, so a
 * broadcast lost, or never sent by a process killed after its commit, costs one poll: accounts
 * migration 0015), every `refreshMs` in case the epochs cannot be read, and on the
 * `codes.code-block-lifted` broadcast (a lifted report drops out, and the code stays blocked only if
 * another confirmed report of it remains); added to at once on the `codes.code-blocked` broadcast.
 * Blocks are rare (a person confirms each), so the set stays small. The blocklist's entries
 * (handlers/blocklist.ts), which can be removed, are held beside them (blocklist-cache.ts): an
 * owner's read again on each change of theirs (its broadcast, or the `code_blocklist` epoch's move
 * and their count of changes), everyone's on each refresh.
 */
export function createCodeBlocks(
  db: SqlDatabase,
  options: { refreshMs?: number; epochs?: CacheEpochs; epochCheckMs?: number; log?: Logger } = {},
) {
  const refreshMs = options.refreshMs ?? 30_000;
  const epochs = options.epochs ?? fixedCacheEpochs;
  /** The `code_blocks` and `code_blocklist` epochs the blocks were last read under (or are being read under). */
  let readEpoch = 0;
  let listedEpoch = 0;
  let epochTimer: NodeJS.Timeout | undefined;
  let blocks = new Map<string, ShownBlock>();
  /**
   * The blocks added while each read under way ran: kept on top of what it read (it may have begun
   * before their commit). One list a read, so a read gets only the adds made while it ran.
   */
  const addsDuringReads = new Set<BlockedCode[]>();
  /** Reads are numbered; the result of one older than the last applied is dropped (it may hold a lifted block). */
  let readsStarted = 0;
  let lastApplied = 0;
  /**
   * Reports lifted lately: a block of one of them that arrives after its lift (broadcasts are not
   * ordered across subjects, and a read may have begun before the lift) is not taken.
   */
  const liftedReports = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const listed = createBlocklistCache(db);

  const addTo = (map: Map<string, ShownBlock>, block: BlockedCode) => {
    if (block.reportId !== undefined && liftedReports.has(block.reportId)) return;
    const key = blockKey(block.environment, block.gtin, block.serial, block.ownerAccountId);
    const known = map.get(key);
    // The first confirmation of a code stands; later ones (another report of it) change nothing
    // shown. Of two confirmed in the same millisecond, the lower report id, as GET /codes/{assetId}
    // names it (code-status.ts): which was read first decided it, and replicas and the code's view
    // could name different reports.
    const first =
      !known ||
      known.shown.confirmedAt > block.confirmedAt ||
      (known.shown.confirmedAt === block.confirmedAt && (block.reportId ?? '') < (known.reportId ?? ''));
    if (first) map.set(key, { shown: { reason: block.reason, confirmedAt: block.confirmedAt }, reportId: block.reportId });
  };
  const add = (block: BlockedCode) => {
    addTo(blocks, block);
    for (const adds of addsDuringReads) adds.push(block);
  };
  /** Remembers a lifted report (the newest 10,000): see liftedReports. */
  const lifted = (reportId: string) => {
    liftedReports.add(reportId);
    if (liftedReports.size > 10_000) liftedReports.delete(liftedReports.values().next().value as string);
  };

  const load = async () => {
    const number = ++readsStarted;
    const adds: BlockedCode[] = [];
    addsDuringReads.add(adds);
    try {
      const rows = await db.query<{
        report_id: string;
        environment: Environment;
        gtin: string;
        serial: string;
        owner_account_id: string;
        decision_reason: string | null;
        decided_at: Date | string;
      }>(
        `SELECT report_id, environment, gtin, serial, owner_account_id, decision_reason, decided_at FROM code_reports
          WHERE status = 'confirmed'`,
      );
      if (number < lastApplied) return;
      const read = new Map<string, ShownBlock>();
      for (const row of rows) {
        addTo(read, {
          reportId: row.report_id,
          environment: row.environment,
          gtin: row.gtin,
          serial: row.serial,
          ownerAccountId: row.owner_account_id,
          reason: row.decision_reason,
          confirmedAt: iso(row.decided_at),
        });
      }
      for (const block of adds) addTo(read, block);
      blocks = read;
      lastApplied = number;
    } finally {
      addsDuringReads.delete(adds);
    }
  };

  return {
    /** The owner's block of the code, if any. Synchronous: this is on every verification. */
    find(environment: Environment, gtin: string, serial: string, ownerAccountId: string): ConfirmedReport | undefined {
      return blocks.size === 0 ? undefined : blocks.get(blockKey(environment, gtin, serial, ownerAccountId))?.shown;
    },
    /** The owner's active blocklist entry covering the code, if any (synchronous too). */
    findListed: listed.find,
    /** Reads the blocklist again (after a change made here). */
    reloadListed: listed.reload,
    add,
    /** A report's block was lifted (here, or on the broadcast): its block is no longer taken. */
    lifted,
    /** Reads the blocks again whole (after a lift made here). */
    reload: load,
    /** Loads the blocks, follows the broadcasts and starts the periodic top-up; `stop` ends them. */
    async start(bus: Bus) {
      readEpoch = epochs.current('code_blocks');
      listedEpoch = epochs.current('code_blocklist');
      await Promise.all([load(), listed.reload()]);
      // The epochs are polled (cache-epochs.ts); looking at the numbers costs nothing.
      epochTimer = setInterval(() => {
        if (epochs.current('code_blocks') > readEpoch) {
          readEpoch = epochs.current('code_blocks');
          load().catch((error: unknown) => options.log?.warn({ err: error }, 'could not read the blocked codes again'));
        }
        if (epochs.current('code_blocklist') > listedEpoch) {
          listedEpoch = epochs.current('code_blocklist');
          listed.reloadChanged().catch((error: unknown) => options.log?.warn({ err: error }, 'could not reload the blocklist'));
        }
      }, options.epochCheckMs ?? 100);
      epochTimer.unref();
      const subscription = await bus.onBroadcast(broadcasts.codeBlocked, (payload) => add(payload as BlockedCode));
      const liftedSubscription = await bus.onBroadcast(broadcasts.codeBlockLifted, (payload) => {
        const { reportId } = payload as { reportId?: unknown };
        if (typeof reportId === 'string') lifted(reportId);
        load().catch((error: unknown) => options.log?.warn({ err: error }, 'could not read the blocked codes again'));
      });
      const listedSubscription = await bus.onBroadcast(broadcasts.blocklistChanged, (payload) => {
        // The owner whose blocks changed (every owner's for a payload that names none).
        listed
          .reload(ownerOfBroadcast(payload))
          .catch((error: unknown) => options.log?.warn({ err: error }, 'could not reload the blocklist'));
      });
      timer = setInterval(() => {
        Promise.all([load(), listed.reload()]).catch((error: unknown) =>
          options.log?.warn({ err: error }, 'could not refresh the blocked codes'),
        );
      }, refreshMs);
      timer.unref();
      return {
        async stop() {
          if (timer) clearInterval(timer);
          if (epochTimer) clearInterval(epochTimer);
          await subscription.stop();
          await liftedSubscription.stop();
          await listedSubscription.stop();
        },
      };
    },
  };
}
export type CodeBlocks = ReturnType<typeof createCodeBlocks>;
