import {
  decodeCursor,
  type Environment,
  encodeCursor,
  type GtinClaimList,
  type GtinClaimView,
  HallmarkError,
} from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime, type SqlExecutor } from '@hallmark/sql';
import type { GtinClaimReach } from './domain/caller-environment.ts';
import { claimValuesCovering, type GtinClaimTarget } from './gtin-ownership.ts';

interface GtinClaimRow {
  id: string;
  account_id: string;
  environment: Environment;
  kind: 'gtin' | 'prefix';
  value: string;
  source: 'granted' | 'claimed' | 'migrated' | 'registered';
  created_at: Date | string;
  revoked_at: Date | string | null;
}

export function gtinClaimView(row: GtinClaimRow): GtinClaimView {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    value: row.value,
    environment: row.environment,
    source: row.source,
    status: row.revoked_at === null ? 'active' : 'revoked',
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  };
}

/**
 * The account whose codes of this GTIN count in this environment: the owner of an active claim
 * covering it, or, when nobody owns it, the operator's account (so a single-brand deployment needs
 * no set-up). Undefined only when there is neither. gtinSignerSql states the same rule for a
 * statement (one GTIN at a time here, with whether the account owns it).
 */
export async function findGtinSigner(
  sql: SqlExecutor,
  environment: Environment,
  gtin: string,
): Promise<{ accountId: string; owned: boolean } | undefined> {
  const rows = await sql.query<{ account_id: string; owned: boolean }>(
    `(SELECT account_id, true AS owned FROM gtin_claims
       WHERE revoked_at IS NULL AND value = ANY($1::text[]) AND (environment = 'live' OR environment = $2) LIMIT 1)
     UNION ALL
     (SELECT id, false FROM accounts WHERE is_operator ORDER BY created_at LIMIT 1)`,
    [claimValuesCovering(gtin), environment],
  );
  const owner = rows.find((row) => row.owned) ?? rows[0];
  return owner ? { accountId: owner.account_id, owned: owner.owned } : undefined;
}

/**
 * findGtinSigner's rule as an SQL expression, for statements that check many GTINs at once (the
 * codes insert): the account of an active claim covering the GTIN (`covering`: claimValuesCovering's
 * values, a text[] expression) in `environment` (live claims count in test too), else the operator's.
 */
export const gtinSignerSql = (covering: string, environment: string): string =>
  `COALESCE(
     (SELECT c.account_id FROM gtin_claims c
       WHERE c.revoked_at IS NULL AND c.value = ANY(${covering}) AND (c.environment = 'live' OR c.environment = ${environment})
       LIMIT 1),
     (SELECT a.id FROM accounts a WHERE a.is_operator ORDER BY a.created_at LIMIT 1))`;

/** A claim as it will be stored and recorded: its id and time are made here, before its event is written. */
export function newGtinClaim(
  claim: {
    accountId: string;
    environment: Environment;
    target: GtinClaimTarget;
    source: 'granted' | 'claimed' | 'registered';
  },
  now: Date,
): GtinClaimView {
  return {
    id: `gtc_${randomHex(10)}`,
    accountId: claim.accountId,
    kind: claim.target.kind,
    value: claim.target.value,
    environment: claim.environment,
    source: claim.source,
    status: 'active',
    createdAt: now.toISOString(),
    revokedAt: null,
  };
}

/**
 * Whether `existing`, another account's active claim that overlaps `claim`, gives way to it rather
 * than refusing it: a live grant (the operator's; live covers both environments) takes precedence
 * over other accounts' self-service test claims (source `claimed`), which decided nothing in live.
 * So a sandbox key cannot squat a brand's GTINs and block the brand's live onboarding. Every other
 * overlap of two accounts' claims refuses the new one (CONFLICT).
 */
export function givesWayTo(
  existing: Pick<GtinClaimView, 'source' | 'environment'>,
  claim: Pick<GtinClaimView, 'source' | 'environment'>,
): boolean {
  return (
    claim.source === 'granted' && claim.environment === 'live' && existing.source === 'claimed' && existing.environment === 'test'
  );
}

/** The active claims, of any account, that overlap `claim` in an overlapping environment, oldest first. */
function activeOverlapping(
  sql: SqlExecutor,
  claim: Pick<GtinClaimView, 'environment' | 'kind' | 'value'>,
): Promise<GtinClaimRow[]> {
  return sql.query<GtinClaimRow>(
    `SELECT * FROM gtin_claims
     WHERE revoked_at IS NULL
       AND (environment = 'live' OR $1 = 'live' OR environment = $1)
       AND CASE WHEN $2 = 'gtin'
             THEN (kind = 'gtin' AND value = $3) OR (kind = 'prefix' AND substr($3, 2) LIKE value || '%')
             ELSE (kind = 'gtin' AND substr(value, 2) LIKE $3 || '%') OR (kind = 'prefix' AND ($3 LIKE value || '%' OR value LIKE $3 || '%'))
           END
     ORDER BY created_at, id`,
    [claim.environment, claim.kind, claim.value],
  );
}

/**
 * The other accounts' active claims that would give way to `claim` (givesWayTo) were it stored now,
 * oldest first: what a grant's event names before its transaction (insertGtinClaim) revokes them.
 */
export async function findClaimsGivingWay(sql: SqlExecutor, claim: GtinClaimView): Promise<GtinClaimView[]> {
  // Only a live grant has claims giving way to it: no need to look for any other.
  if (!givesWayTo({ source: 'claimed', environment: 'test' }, claim)) return [];
  return (await activeOverlapping(sql, claim))
    .filter((row) => row.account_id !== claim.accountId && givesWayTo(row, claim))
    .map(gtinClaimView);
}

/**
 * Stores a claim unless another account holds an overlapping one in an overlapping environment
 * (CONFLICT, naming the claims in the way), or this account already holds exactly this one
 * (CONFLICT naming it). Other accounts' overlapping claims that give way to it (givesWayTo: their
 * self-service test claims, under a live grant) are revoked in the same write, at the claim's
 * `createdAt` and by `createdBy`; it answers them, as revoked, oldest first (none for any other claim).
 * Run it in a transaction (the claim's event's, where it has one): claims are made one at a time
 * under an advisory lock, since overlap of prefixes is not a constraint SQL can express.
 */
export async function insertGtinClaim(sql: SqlExecutor, claim: GtinClaimView, createdBy: string): Promise<GtinClaimView[]> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [gtinClaimsLock]);
  const { kind, value } = claim;
  const overlapping = await activeOverlapping(sql, claim);
  const others = overlapping.filter((row) => row.account_id !== claim.accountId);
  const blocking = others.filter((row) => !givesWayTo(row, claim));
  if (blocking.length > 0) {
    throw new HallmarkError('CONFLICT', `Another account owns ${kind === 'gtin' ? 'this GTIN' : 'GTINs under this prefix'}.`, {
      [kind]: value,
      conflictsWith: blocking.map((row) => ({ kind: row.kind, value: row.value, environment: row.environment })),
    });
  }
  const same = overlapping.find((row) => row.kind === kind && row.value === value && row.environment === claim.environment);
  if (same) throw new HallmarkError('CONFLICT', 'This account already holds this claim.', { id: same.id });
  const givingWay = others.map((row) => row.id);
  const revoked =
    givingWay.length === 0
      ? []
      : await sql.query<GtinClaimRow>(
          `UPDATE gtin_claims SET revoked_at = $2, revoked_by = $3 WHERE id = ANY($1::text[]) AND revoked_at IS NULL RETURNING *`,
          [givingWay, claim.createdAt, createdBy],
        );
  await sql.query(
    `INSERT INTO gtin_claims (id, account_id, environment, kind, value, source, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [claim.id, claim.accountId, claim.environment, kind, value, claim.source, createdBy, claim.createdAt],
  );
  return revoked.map(gtinClaimView).sort((a, b) => givingWay.indexOf(a.id) - givingWay.indexOf(b.id));
}

/** A claim within the caller's reach (domain/caller-environment.ts); undefined when there is none there. */
export async function findGtinClaim(
  sql: SqlExecutor,
  claimId: string,
  reach: GtinClaimReach,
): Promise<GtinClaimView | undefined> {
  const rows = await sql.query<GtinClaimRow>(
    'SELECT * FROM gtin_claims WHERE id = $1 AND ($2::text IS NULL OR account_id = $2) AND environment = ANY($3::text[])',
    [claimId, reach.accountId ?? null, reach.environments],
  );
  return rows[0] ? gtinClaimView(rows[0]) : undefined;
}

/**
 * The advisory lock under which claims change (held exclusively, in the change's transaction) and
 * codes are stored (shared, code-service's codesInsert): a code is stored either before a claim
 * changes or after, read against the claims as they are then, never by a signer who lost the GTIN
 * while its statement ran.
 */
export const gtinClaimsLock = 'hallmark:gtin-claims';

/** Revokes an active claim; undefined when it is not active (any more). Run it in a transaction (it takes gtinClaimsLock). */
export async function revokeGtinClaim(
  sql: SqlExecutor,
  claimId: string,
  at: Date,
  by: string,
): Promise<GtinClaimView | undefined> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [gtinClaimsLock]);
  const revoked = await sql.query<GtinClaimRow>(
    `UPDATE gtin_claims SET revoked_at = $2, revoked_by = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING *`,
    [claimId, at, by],
  );
  return revoked[0] ? gtinClaimView(revoked[0]) : undefined;
}

/** An account's claims, newest first, with cursor paging; of every environment unless `environments` says which. */
export async function listGtinClaims(
  sql: SqlExecutor,
  accountId: string,
  options: {
    limit: number;
    cursor?: string | undefined;
    status?: 'active' | 'revoked' | undefined;
    environments?: readonly Environment[] | undefined;
  },
): Promise<GtinClaimList> {
  const [afterUs, afterId] = options.cursor
    ? decodeCursor(options.cursor, [cursorMicrosecondsPattern, /^gtc_[0-9a-f]{20}$/])
    : [];
  const rows = await sql.query<GtinClaimRow & { created_us: string }>(
    `SELECT c.*, ${cursorMicroseconds('c.created_at')} AS created_us FROM gtin_claims c
     WHERE c.account_id = $1
       AND ($2::text IS NULL OR ($2 = 'active') = (c.revoked_at IS NULL))
       AND ($3::bigint IS NULL OR (c.created_at, c.id) < (${cursorTime('$3')}, $4::text))
       AND ($6::text[] IS NULL OR c.environment = ANY($6::text[]))
     ORDER BY c.created_at DESC, c.id DESC LIMIT $5`,
    [accountId, options.status ?? null, afterUs ?? null, afterId ?? null, options.limit + 1, options.environments ?? null],
  );
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  const hasMore = rows.length > options.limit;
  return {
    claims: page.map(gtinClaimView),
    pagination: { limit: options.limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.created_us, last.id]) : null },
  };
}

/** Every active claim, for publishing which keys may sign for what (the JWKS). */
export async function listActiveGtinClaims(
  sql: SqlExecutor,
): Promise<Array<{ accountId: string; environment: Environment; kind: 'gtin' | 'prefix'; value: string }>> {
  const rows = await sql.query<GtinClaimRow>(
    `SELECT account_id, environment, kind, value FROM gtin_claims WHERE revoked_at IS NULL ORDER BY kind, value`,
  );
  return rows.map((row) => ({ accountId: row.account_id, environment: row.environment, kind: row.kind, value: row.value }));
}
