import type { BlockedCode, Environment, Principal } from '@hallmark/contracts';
import type { SqlDatabase } from '@hallmark/sql';
import { type BlockRow, columns } from './blocklist.ts';

interface ListedBlock {
  from: string;
  to: string;
  view: BlockedCode;
}

/** An owner's active blocks by GTIN, a counterfeit block before a withdrawal of the same code. */
type OwnerBlocks = Map<string, ListedBlock[]>;

const ownerKey = (environment: string, accountId: string) => `${environment}\n${accountId}`;

/** What one read is to bring: every owner's blocks, or the named owners' only. */
interface Round {
  everyone: boolean;
  owners: Map<string, Principal>;
}

function byGtinOf(rows: readonly BlockRow[]): Map<string, OwnerBlocks> {
  const owners = new Map<string, OwnerBlocks>();
  for (const row of rows) {
    const key = ownerKey(row.environment, row.account_id);
    let blocks = owners.get(key);
    if (!blocks) owners.set(key, (blocks = new Map()));
    const list = blocks.get(row.gtin) ?? [];
    list.push({
      from: row.serial_from,
      to: row.serial_to,
      view: { blockId: row.block_id, kind: row.kind, reason: row.reason, blockedAt: new Date(row.created_at).toISOString() },
    });
    blocks.set(row.gtin, list);
  }
  for (const blocks of owners.values()) {
    for (const list of blocks.values())
      list.sort((a, b) => (a.view.kind === b.view.kind ? 0 : a.view.kind === 'counterfeit' ? -1 : 1));
  }
  return owners;
}

/**
 * The active blocks of every account, in memory by owner and GTIN: verification looks a code up
 * without a query. A change reads again only its owner's blocks (here at once, on other replicas on
 * the `codes.blocklist-changed` broadcast, which names the owner), so one tenant changing blocks in
 * a loop costs a read of its own blocks (at most HALLMARK_MAX_ACTIVE_BLOCKS), never of everyone's;
 * the owners whose changes were counted since (`reloadChanged`) when the `code_blocklist` cache
 * epoch moves, so a lost broadcast costs one poll; everything at start and on CodeBlocks' periodic
 * refresh. Reads run one at a time, in the
 * order asked, so an older read never lands over a newer one; the asks made while one runs share
 * the next.
 */
export function createBlocklistCache(db: SqlDatabase) {
  let owners = new Map<string, OwnerBlocks>();
  let next: (Round & { done: Promise<void>; settle: (error?: unknown) => void }) | undefined;
  let reading = false;
  /** Each owner's count of blocklist changes (blocklist_owner_changes) as of the last read of its blocks here. */
  let readChanges = new Map<string, number>();

  /** Every owner's count of changes, counted by the database's triggers in each change's transaction. */
  const changeCounts = async () => {
    const rows = await db.query<{ account_id: string; environment: Environment; changes: string | number }>(
      'SELECT account_id, environment, changes FROM blocklist_owner_changes',
    );
    return rows.map((row) => ({
      key: ownerKey(row.environment, row.account_id),
      owner: { accountId: row.account_id, environment: row.environment },
      changes: Number(row.changes),
    }));
  };

  const read = async (round: Round) => {
    if (round.everyone) {
      // The counts before the blocks: a change counted after this read is read again on its count.
      const counts = await changeCounts();
      owners = byGtinOf(await db.query<BlockRow>(`SELECT ${columns} FROM code_blocklist WHERE removed_at IS NULL`));
      readChanges = new Map(counts.map(({ key, changes }) => [key, changes]));
      return;
    }
    const asked = [...round.owners.values()];
    const rows = await db.query<BlockRow>(
      `SELECT ${columns} FROM code_blocklist
        WHERE removed_at IS NULL
          AND (account_id, environment) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [asked.map((owner) => owner.accountId), asked.map((owner) => owner.environment)],
    );
    const read = byGtinOf(rows);
    const updated = new Map(owners);
    for (const [key] of round.owners) {
      const blocks = read.get(key);
      if (blocks) updated.set(key, blocks);
      else updated.delete(key);
    }
    owners = updated;
  };

  const drain = async () => {
    reading = true;
    try {
      while (next) {
        const round = next;
        next = undefined;
        try {
          await read(round);
          round.settle();
        } catch (error) {
          round.settle(error);
        }
      }
    } finally {
      reading = false;
    }
  };

  /**
   * Reads the owner's blocks again (every owner's without one); resolves once a read begun after
   * this call has landed.
   */
  function reload(owner?: Principal): Promise<void> {
    if (!next) {
      let settle!: (error?: unknown) => void;
      const done = new Promise<void>((resolve, reject) => {
        settle = (error) => (error === undefined ? resolve() : reject(error));
      });
      // A caller that does not wait for it is told nothing; one that does gets the error.
      done.catch(() => {});
      next = { everyone: false, owners: new Map(), done, settle };
    }
    if (owner) next.owners.set(ownerKey(owner.environment, owner.accountId), owner);
    else next.everyone = true;
    const { done } = next;
    if (!reading) void drain();
    return done;
  }

  return {
    reload,
    /**
     * Reads again the blocks of every owner whose changes were counted since its blocks were last
     * read here: when the `code_blocklist` cache epoch moves (a change anywhere, its broadcast heard
     * here or not). Another owner's blocks are not read.
     */
    async reloadChanged(): Promise<void> {
      const changed = (await changeCounts()).filter(({ key, changes }) => readChanges.get(key) !== changes);
      await Promise.all(changed.map(({ owner }) => reload(owner)));
      // The counts were read before the blocks: a later change has a higher count, read again then.
      for (const { key, changes } of changed) readChanges.set(key, changes);
    },
    /** The owner's active block of the code, if any. Synchronous: this is on every verification. */
    find(environment: Environment, gtin: string, serial: string, ownerAccountId: string): BlockedCode | undefined {
      if (owners.size === 0) return undefined;
      const list = owners.get(ownerKey(environment, ownerAccountId))?.get(gtin);
      if (!list) return undefined;
      for (const block of list) {
        if (serial.length !== block.from.length) continue;
        if (serial >= block.from && serial <= block.to) return block.view;
      }
      return undefined;
    },
  };
}
export type BlocklistCache = ReturnType<typeof createBlocklistCache>;
