import { findGtinSigner, type GtinSigners } from '@hallmark/accounts';
import {
  type CreateLinkBody,
  decodeCursor,
  encodeCursor,
  gs1LinkTypes,
  HallmarkError,
  type ItemLinks,
  type LinkList,
  type LinkView,
  type ListLinksQuery,
  linkTypeCurie,
  type Principal,
  type RemovedByCreator,
  type UpdateLinkBody,
} from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import type { EventStore } from '@hallmark/event-store';
import { checkAi82Value, checkGtin14 } from '@hallmark/gs1';
import { accountStream } from '@hallmark/provenance';
import { removalChunk, removeChunksForATurn } from '@hallmark/runtime';
import { cursorMicroseconds, cursorMicrosecondsPattern, cursorTime, type SqlDatabase, type SqlExecutor } from '@hallmark/sql';

export interface LinkDeps {
  db: SqlDatabase;
  eventStore: EventStore;
  clock: () => Date;
  /** Who owns a GTIN, cached and dropped on every ownership change (gtin-signers.ts). */
  signers: GtinSigners;
  /** The resolver's address (HALLMARK_RESOLVER_URL): a link back into it would loop. */
  resolverUrl?: string;
  /** How long the resolver's answer for an item is kept (default 2 s); a change on this replica drops it at once. */
  itemCacheMs?: number;
}

interface Row {
  id: string;
  account_id: string;
  environment: string;
  gtin: string;
  lot: string | null;
  serial: string | null;
  link_type: string;
  href: string;
  title: string;
  media_type: string;
  hreflang: string[] | string;
  is_default: boolean;
  created_at: Date | string;
  updated_at: Date | string;
  created_by?: string | null;
  changed_by?: string | null;
  created_us?: string;
}

const iso = (value: Date | string) => new Date(value).toISOString();

function viewOf(row: Row): LinkView {
  return {
    id: row.id,
    gtin: row.gtin,
    lot: row.lot,
    serial: row.serial,
    linkType: row.link_type,
    href: row.href,
    title: row.title,
    type: row.media_type,
    hreflang: typeof row.hreflang === 'string' ? (JSON.parse(row.hreflang) as string[]) : row.hreflang,
    default: row.is_default,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    createdBy: row.created_by ?? null,
    changedBy: row.changed_by ?? null,
  };
}

const invalid = (field: string, message: string, value?: unknown) =>
  new HallmarkError('VALIDATION_ERROR', `Invalid request: ${field} ${message}.`, {
    fields: [{ field, in: 'body', message, ...(value !== undefined ? { value } : {}) }],
  });

const allowedTypes = new Set<string>(gs1LinkTypes.map((type) => `gs1:${type}`));

/** A GS1 link type a brand may set, as its CURIE; anything else is refused with the reason. */
function checkLinkType(value: string): string {
  const curie = linkTypeCurie(value);
  if (curie === 'gs1:defaultLink') {
    throw invalid('linkType', 'cannot be gs1:defaultLink: give the link its own type and `default: true`', value);
  }
  if (curie === 'gs1:verificationService') {
    throw invalid('linkType', 'cannot be gs1:verificationService: that is Hallmark’s verification page of every item', value);
  }
  if (curie === undefined || !allowedTypes.has(curie)) {
    throw invalid(
      'linkType',
      'must be a GS1 link type, e.g. gs1:pip or https://gs1.org/voc/pip (GET /.well-known/gs1resolver)',
      value,
    );
  }
  return curie;
}

/**
 * Only absolute http(s) URLs without credentials: no javascript:, data:, file: or relative links;
 * and none back into this resolver's item paths (`/01/…`, a compressed link) on its host name, by
 * any scheme or port, where a scan would loop.
 */
function checkHref(value: string, resolverUrl?: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('href', 'must be an absolute http or https URL', value);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalid('href', `must be an http or https URL, not ${url.protocol.replace(':', '')}`, value);
  }
  if (url.username !== '' || url.password !== '') throw invalid('href', 'must not carry a user name or password', value);
  // By host name: the resolver's http address redirects to its https one, and a port may be left out;
  // a trailing dot names the same host in DNS (`id.brand.example.`), so it is left out of both.
  const hostOf = (address: URL) => address.hostname.replace(/\.$/, '');
  if (
    resolverUrl !== undefined &&
    hostOf(url) === hostOf(new URL(resolverUrl)) &&
    /^\/(01\/|[A-Za-z0-9_-]+$)/.test(url.pathname)
  ) {
    throw invalid('href', 'must not lead back to this resolver’s item links (a scan would go round in circles)', value);
  }
  return url.toString();
}

function checkItemPart(field: 'lot' | 'serial', value: string | undefined): string | null {
  if (value === undefined) return null;
  const problem = checkAi82Value(field, value);
  if (problem) throw invalid(field, problem.replace(`${field} `, ''), value);
  return value;
}

/**
 * The most links one level of an item (its GTIN, a lot of it, a serial of it) may have, per account
 * and environment: every scan of the item reads them, and the linkset lists them. Without it a brand
 * with 2,000 links on a GTIN made each scan take 150 ms and each answer 4.7 MB.
 */
export const maxLinksPerItemLevel = 100;

/**
 * The most links an account may have per environment: a free account could otherwise add 20 a
 * second without end (1.7 million a day), each a row every page of `GET /links` and every backup carries.
 */
export const maxLinksPerAccount = 100_000;

const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';

const defaultTaken = (link: { gtin: string; lot: string | null; serial: string | null }) =>
  new HallmarkError(
    'CONFLICT',
    'This item already has a default link: set `default: false` on it first (PATCH /links/{id}), or give this link `default: false`.',
    { gtin: link.gtin, lot: link.lot, serial: link.serial },
  );

/**
 * Refuses (409) a link by a key given a limit of its own (one restricted to some GTINs) that has made
 * `limit` links still there: counted along item_links_by_creator (migration 0012), at most up to it.
 */
async function refuseBeyondKeyLimit(sql: SqlExecutor, owner: Principal, keyId: string, limit: number): Promise<void> {
  const [made] = await sql.query<{ links: string | number }>(
    `SELECT count(*) AS links FROM (
       SELECT 1 FROM item_links WHERE account_id = $1 AND environment = $2 AND created_by = $3 LIMIT $4) AS made`,
    [owner.accountId, owner.environment, keyId, limit],
  );
  if (Number(made?.links ?? 0) >= limit) {
    throw new HallmarkError(
      'CONFLICT',
      `This API key is restricted to some GTINs and has made ${limit.toLocaleString('en')} links, the most such a key may have: have a key without restrictions delete links it made (DELETE /links?createdBy=) or link instead.`,
      { limit, keyId },
    );
  }
}

/**
 * Takes a place for one more link, in the account's maxLinksPerAccount, the item level's
 * maxLinksPerItemLevel and, for a key given a limit of its own (`maker.limit`: one restricted to some
 * GTINs), the links that key made; or refuses (409, nothing stored). The owner's creations at once
 * take it in turn.
 */
async function takeLinkPlace(
  sql: SqlExecutor,
  owner: Principal,
  link: { gtin: string; lot: string | null; serial: string | null },
  maker: { keyId: string | null; limit: number | undefined },
): Promise<void> {
  // One owner's creations take their places in turn (the count below is then exact).
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `hallmark:links:${owner.accountId}:${owner.environment}`,
  ]);
  // Counted along item_links_by_owner, at most up to the limit.
  const [owned] = await sql.query<{ links: string | number }>(
    'SELECT count(*) AS links FROM (SELECT 1 FROM item_links WHERE account_id = $1 AND environment = $2 LIMIT $3) AS owned',
    [owner.accountId, owner.environment, maxLinksPerAccount],
  );
  if (Number(owned?.links ?? 0) >= maxLinksPerAccount) {
    throw new HallmarkError(
      'CONFLICT',
      `This account has ${maxLinksPerAccount.toLocaleString('en')} links in this environment, the most it may have: delete links no longer needed.`,
      { limit: maxLinksPerAccount },
    );
  }
  if (maker.limit !== undefined && maker.keyId !== null) await refuseBeyondKeyLimit(sql, owner, maker.keyId, maker.limit);
  const [row] = await sql.query<{ links: string | number }>(
    `SELECT count(*) AS links FROM item_links WHERE environment = $2 AND gtin = $3 AND account_id = $1
       AND coalesce(lot, '') = coalesce($4, '') AND coalesce(serial, '') = coalesce($5, '')`,
    [owner.accountId, owner.environment, link.gtin, link.lot, link.serial],
  );
  if (Number(row?.links ?? 0) >= maxLinksPerItemLevel) {
    throw new HallmarkError(
      'CONFLICT',
      `This item already has ${maxLinksPerItemLevel} links at this level (its GTIN, lot or serial): delete one first.`,
      { limit: maxLinksPerItemLevel, gtin: link.gtin, lot: link.lot, serial: link.serial },
    );
  }
}

async function otherDefault(
  sql: SqlExecutor,
  owner: Principal,
  link: { id: string; gtin: string; lot: string | null; serial: string | null },
): Promise<string | undefined> {
  const rows = await sql.query<{ id: string }>(
    `SELECT id FROM item_links WHERE account_id = $1 AND environment = $2 AND gtin = $3
       AND coalesce(lot, '') = coalesce($4, '') AND coalesce(serial, '') = coalesce($5, '') AND is_default AND id <> $6`,
    [owner.accountId, owner.environment, link.gtin, link.lot, link.serial, link.id],
  );
  return rows[0]?.id;
}

/**
 * The brand's links per GTIN, lot or serial (docs/RESOLVER.md, "Links"). Each change is an event in
 * the account's stream (`link.created`, `link.updated`, `link.deleted`) with the row written in its
 * transaction; a refusal stores nothing.
 */
export function createLinks(deps: LinkDeps) {
  // Every scan asks for its item's links (the resolver's redirect): a GTIN's are kept briefly, per
  // GTIN, never per lot or serial, which anyone can make up (one entry each, expired entries kept,
  // held 120 MB after 400 made-up serials of a GTIN with 100 links).
  const itemCacheMs = deps.itemCacheMs ?? 2_000;
  const itemCache = new Map<string, { links: GtinLinks; until: number }>();
  const requireOwned = async (owner: Principal, gtin: string) => {
    const signer = await findGtinSigner(deps.db, owner.environment, gtin);
    if (!signer?.owned || signer.accountId !== owner.accountId) {
      throw new HallmarkError(
        'GTIN_NOT_OWNED',
        'This account does not own the GTIN: links can be set only for GTINs the account was granted (GET /api/v1/gtins).',
        { gtin },
      );
    }
  };

  /** The GTIN's live owner's GTIN-wide links, oldest first, and whether it has any for a lot or serial. */
  const readGtinLinks = async (gtin: string): Promise<GtinLinks> => {
    const signer = await deps.signers.signerOf('live', gtin);
    if (!signer?.owned) return { owner: undefined, gtinWide: [], narrower: false };
    const rows = await deps.db.query<Row & { narrower: boolean }>(
      `SELECT l.*, false AS narrower FROM (
         SELECT * FROM item_links WHERE environment = 'live' AND gtin = $1 AND account_id = $2 AND lot IS NULL AND serial IS NULL
         ORDER BY created_at, id LIMIT $3) l
       UNION ALL
       SELECT n.*, true AS narrower FROM (
         SELECT * FROM item_links WHERE environment = 'live' AND gtin = $1 AND account_id = $2 AND (lot IS NOT NULL OR serial IS NOT NULL)
         LIMIT 1) n`,
      [gtin, signer.accountId, maxLinksPerItemLevel],
    );
    return {
      owner: signer.accountId,
      gtinWide: rows.filter((row) => !row.narrower).map(viewOf),
      narrower: rows.some((row) => row.narrower),
    };
  };

  /** The owner's links of the scanned item's lot and serial (not its GTIN's): serial over lot, then oldest first. */
  const readNarrowerLinks = async (
    accountId: string,
    item: { gtin: string; lot?: string | undefined; serial?: string | undefined },
  ): Promise<LinkView[]> => {
    const rows = await deps.db.query<Row>(
      `SELECT * FROM item_links
       WHERE environment = 'live' AND gtin = $1 AND account_id = $2 AND (lot IS NOT NULL OR serial IS NOT NULL)
         AND (lot IS NULL OR lot = $3) AND (serial IS NULL OR serial = $4)
       ORDER BY (CASE WHEN serial IS NOT NULL THEN 2 ELSE 0 END + CASE WHEN lot IS NOT NULL THEN 1 ELSE 0 END) DESC, created_at, id
       LIMIT $5`,
      [item.gtin, accountId, item.lot ?? null, item.serial ?? null, 3 * maxLinksPerItemLevel],
    );
    return rows.map(viewOf);
  };

  const find = async (owner: Principal, id: string): Promise<Row> => {
    const rows = await deps.db.query<Row>('SELECT * FROM item_links WHERE id = $1 AND account_id = $2 AND environment = $3', [
      id,
      owner.accountId,
      owner.environment,
    ]);
    const row = rows[0];
    if (!row) throw new HallmarkError('NOT_FOUND', 'There is no link with this id.', { id });
    return row;
  };

  const record = async (
    owner: Principal,
    type: string,
    data: Record<string, unknown>,
    write: (sql: SqlExecutor) => Promise<void>,
  ) => {
    try {
      await deps.eventStore.append(accountStream(owner), [{ type, data }], {
        expectedVersion: 'any',
        readModels: { db: deps.db, write },
      });
      // The resolver's kept answers are dropped once the change is stored (other replicas' within itemCacheMs).
      itemCache.clear();
    } catch (error) {
      if (isUniqueViolation(error)) {
        const link = data as { gtin: string; lot: string | null; serial: string | null };
        throw defaultTaken(link);
      }
      throw error;
    }
  };

  return {
    async create(owner: Principal, body: CreateLinkBody, keyId?: string, keyLimit?: number): Promise<LinkView> {
      const gtinCheck = checkGtin14(body.gtin);
      if (!gtinCheck.ok) {
        throw new HallmarkError('INVALID_GTIN', `Invalid GTIN: ${gtinCheck.message}.`, {
          provided: body.gtin,
          expected: gtinCheck.reason === 'check-digit' ? gtinCheck.expected : '14 digits with a valid GS1 check digit',
        });
      }
      const linkType = checkLinkType(body.linkType);
      const href = checkHref(body.href, deps.resolverUrl);
      const lot = checkItemPart('lot', body.lot);
      const serial = checkItemPart('serial', body.serial);
      await requireOwned(owner, body.gtin);
      // Refused before the event is appended too (the event store may append before the rows are
      // written: KurrentDB); the count in the link's transaction is what holds against requests at once.
      if (keyLimit !== undefined && keyId !== undefined) await refuseBeyondKeyLimit(deps.db, owner, keyId, keyLimit);
      const now = deps.clock().toISOString();
      const view: LinkView = {
        id: `lnk_${randomHex(10)}`,
        gtin: body.gtin,
        lot,
        serial,
        linkType,
        href,
        title: body.title,
        type: body.type,
        hreflang: body.hreflang ?? [],
        default: body.default ?? false,
        createdAt: now,
        updatedAt: now,
        createdBy: keyId ?? null,
        changedBy: null,
      };
      await record(owner, 'link.created', { ...view }, async (sql) => {
        await takeLinkPlace(sql, owner, view, { keyId: view.createdBy ?? null, limit: keyLimit });
        if (view.default && (await otherDefault(sql, owner, view))) throw defaultTaken(view);
        await sql.query(
          `INSERT INTO item_links (id, account_id, environment, gtin, lot, serial, link_type, href, title, media_type, hreflang, is_default, created_at, updated_at, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $13, $14)`,
          [
            view.id,
            owner.accountId,
            owner.environment,
            view.gtin,
            lot,
            serial,
            linkType,
            href,
            view.title,
            view.type,
            JSON.stringify(view.hreflang),
            view.default,
            now,
            view.createdBy,
          ],
        );
      });
      return view;
    },

    async list(owner: Principal, query: ListLinksQuery): Promise<LinkList> {
      const limit = query.limit ?? 20;
      const [afterUs, afterId] = query.cursor ? decodeCursor(query.cursor, [cursorMicrosecondsPattern, /^.{1,100}$/]) : [];
      const rows = await deps.db.query<Row>(
        // Ordered on the columns of item_links_by_owner themselves, so a page reads its rows off the
        // index: ordered on a value computed from created_at, a page of one sorted all the owner's links.
        `SELECT l.*, ${cursorMicroseconds('l.created_at')} AS created_us FROM item_links l
         WHERE l.account_id = $1 AND l.environment = $2
           AND ($3::text IS NULL OR l.gtin = $3) AND ($4::text IS NULL OR l.lot = $4) AND ($5::text IS NULL OR l.serial = $5)
           AND ($6::bigint IS NULL OR (l.created_at, l.id) < (${cursorTime('$6')}, $7::text))
           AND ($9::text IS NULL OR l.created_by = $9) AND ($10::text IS NULL OR l.changed_by = $10)
         ORDER BY l.created_at DESC, l.id DESC
         LIMIT $8`,
        [
          owner.accountId,
          owner.environment,
          query.gtin ?? null,
          query.lot ?? null,
          query.serial ?? null,
          afterUs ?? null,
          afterId ?? null,
          limit + 1,
          query.createdBy ?? null,
          query.changedBy ?? null,
        ],
      );
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        links: page.map(viewOf),
        pagination: { limit, hasMore, nextCursor: hasMore && last ? encodeCursor([last.created_us ?? '0', last.id]) : null },
      };
    },

    async update(owner: Principal, id: string, body: UpdateLinkBody, keyId?: string): Promise<LinkView> {
      // Read, merge, write, with the row locked and compared in the write: a change stored in
      // between (another PATCH of the link, through another replica say) is merged into, never
      // written over; before, of two PATCHes of different fields both answered 200 and one was lost.
      for (let attempt = 1; ; attempt += 1) {
        const existing = viewOf(await find(owner, id));
        // A GTIN the account gave up (or had taken away) is no longer its to link.
        await requireOwned(owner, existing.gtin);
        const changed: LinkView = {
          ...existing,
          ...(body.linkType !== undefined ? { linkType: checkLinkType(body.linkType) } : {}),
          ...(body.href !== undefined ? { href: checkHref(body.href, deps.resolverUrl) } : {}),
          ...(body.title !== undefined ? { title: body.title } : {}),
          ...(body.type !== undefined ? { type: body.type } : {}),
          ...(body.hreflang !== undefined ? { hreflang: body.hreflang } : {}),
          ...(body.default !== undefined ? { default: body.default } : {}),
          updatedAt: deps.clock().toISOString(),
          changedBy: keyId ?? null,
        };
        try {
          await record(owner, 'link.updated', { ...changed, changes: Object.keys(body) }, async (sql) => {
            const [current] = await sql.query<Row>('SELECT * FROM item_links WHERE id = $1 AND account_id = $2 FOR UPDATE', [
              id,
              owner.accountId,
            ]);
            if (!current) throw new HallmarkError('NOT_FOUND', 'There is no link with this id.', { id });
            if (viewOf(current).updatedAt !== existing.updatedAt) throw new LinkChangedMeanwhile();
            if (changed.default && (await otherDefault(sql, owner, changed))) throw defaultTaken(changed);
            await sql.query(
              `UPDATE item_links SET link_type = $3, href = $4, title = $5, media_type = $6, hreflang = $7::jsonb, is_default = $8, updated_at = $9,
                 changed_by = $10
               WHERE id = $1 AND account_id = $2`,
              [
                id,
                owner.accountId,
                changed.linkType,
                changed.href,
                changed.title,
                changed.type,
                JSON.stringify(changed.hreflang),
                changed.default,
                changed.updatedAt,
                changed.changedBy,
              ],
            );
          });
          return changed;
        } catch (error) {
          if (!(error instanceof LinkChangedMeanwhile)) throw error;
          if (attempt >= 10) throw new HallmarkError('CONFLICT', 'The link kept changing; try again.', { id });
        }
      }
    },

    async remove(owner: Principal, id: string, keyId?: string): Promise<void> {
      const existing = viewOf(await find(owner, id));
      const removed = { ...existing, deletedAt: deps.clock().toISOString(), deletedBy: keyId ?? null };
      await record(owner, 'link.deleted', removed, async (sql) => {
        const deleted = await sql.query('DELETE FROM item_links WHERE id = $1 AND account_id = $2 RETURNING id', [
          id,
          owner.accountId,
        ]);
        if (deleted.length === 0) throw new HallmarkError('NOT_FOUND', 'There is no link with this id.', { id });
      });
    },

    /**
     * DELETE /links?createdBy=<key id>: every link the key made is removed, as one by one, in
     * transactions of removalChunk (each link its `link.deleted` event, by the caller). After a key
     * leaks: the links it added are undone in one request, not one DELETE each. A chunk of which
     * another request removed or changed a link meanwhile is read again (its events then say what was
     * removed). One call removes for a turn (removeChunksForATurn).
     */
    async removeMadeBy(owner: Principal, createdBy: string, keyId: string): Promise<RemovedByCreator> {
      return removeChunksForATurn(async () => {
        const rows = await deps.db.query<Row>(
          `SELECT * FROM item_links WHERE account_id = $1 AND environment = $2 AND created_by = $3
           ORDER BY created_at DESC, id DESC LIMIT ${removalChunk}`,
          [owner.accountId, owner.environment, createdBy],
        );
        if (rows.length === 0) return { found: 0, removed: 0 };
        const deletedAt = deps.clock().toISOString();
        try {
          await deps.eventStore.append(
            accountStream(owner),
            rows.map((row) => ({ type: 'link.deleted', data: { ...viewOf(row), deletedAt, deletedBy: keyId } })),
            {
              expectedVersion: 'any',
              readModels: {
                db: deps.db,
                write: async (sql: SqlExecutor) => {
                  const deleted = await sql.query(
                    `DELETE FROM item_links l USING unnest($1::text[], $3::timestamptz[]) AS read(id, updated_at)
                     WHERE l.id = read.id AND date_trunc('milliseconds', l.updated_at) = read.updated_at AND l.account_id = $2
                     RETURNING l.id`,
                    [rows.map((row) => row.id), owner.accountId, rows.map((row) => viewOf(row).updatedAt)],
                  );
                  if (deleted.length !== rows.length) throw new LinkChangedMeanwhile();
                },
              },
            },
          );
        } catch (error) {
          if (!(error instanceof LinkChangedMeanwhile)) throw error;
          return { found: rows.length, removed: 0 };
        }
        // The resolver's kept answers are dropped once each chunk's removals are stored.
        itemCache.clear();
        return { found: rows.length, removed: rows.length };
      });
    },

    /**
     * The live links of the GTIN's owner that apply to a scanned item: GTIN-wide ones, those of its
     * lot, those of its serial (with its lot or none); most specific first, then oldest first.
     */
    async forItem(item: { gtin: string; lot?: string | undefined; serial?: string | undefined }): Promise<ItemLinks> {
      const now = Date.now();
      let cached = itemCache.get(item.gtin);
      if (!cached || cached.until <= now) {
        const links = await readGtinLinks(item.gtin);
        if (itemCache.size >= 10_000) {
          for (const [gtin, entry] of itemCache) if (entry.until <= now) itemCache.delete(gtin);
          if (itemCache.size >= 10_000) itemCache.clear();
        }
        cached = { links, until: now + itemCacheMs };
        itemCache.set(item.gtin, cached);
      }
      const { owner, gtinWide, narrower } = cached.links;
      if (owner === undefined) return { links: [] };
      // Most specific first: links of a lot or serial are read for the scanned one only, when the GTIN has any.
      const specific =
        narrower && (item.lot !== undefined || item.serial !== undefined) ? await readNarrowerLinks(owner, item) : [];
      return { links: [...specific, ...gtinWide] };
    },
  };
}
export type Links = ReturnType<typeof createLinks>;

/** What the resolver keeps per GTIN: its live owner (none: no links), the GTIN-wide links, whether any are narrower. */
interface GtinLinks {
  owner: string | undefined;
  gtinWide: LinkView[];
  narrower: boolean;
}

/** The link changed between its read and the write of a change to it: read it again and merge. */
class LinkChangedMeanwhile extends Error {}
