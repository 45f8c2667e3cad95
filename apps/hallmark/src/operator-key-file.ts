import { chmod, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ensureOperator,
  findApiKeyByHash,
  findOperatorAccount,
  hashApiKeySecret,
  isWellFormedSecret,
  newApiKeySecret,
} from '@hallmark/accounts';
import type { EventStore } from '@hallmark/event-store';
import type { SqlDatabase } from '@hallmark/sql';

/** The operator key a start made, and the file that holds it. */
export interface MadeOperatorKey {
  secret: string;
  path: string;
}

/**
 * The embedded form's first operator key, in `<dataDir>/operator-key` (mode 0600; the secret
 * never goes to standard output, where terminals, CI logs and log collectors would keep it).
 * The secret is written to `.operator-key.pending` before the database holds its hash, and renamed
 * into place once it does: a start killed between the two leaves the pending file, and the next
 * start, finding that the database knows its key, puts it in place. Before, a start killed after
 * the commit lost the only copy of the key. Resolves with the key when this start made it or put it in place.
 */
export async function ensureOperatorKeyFile(
  dataDir: string,
  deps: { db: SqlDatabase; eventStore: EventStore },
  now: Date,
): Promise<MadeOperatorKey | undefined> {
  const path = join(dataDir, 'operator-key');
  const pending = join(dataDir, '.operator-key.pending');
  const recovered = await recoverPendingKey(deps.db, pending, path);
  if (recovered) return recovered;
  if (await findOperatorAccount(deps.db)) return undefined;

  const secret = newApiKeySecret('live');
  await writeFile(pending, `${secret}\n`, { mode: 0o600, flush: true });
  await chmod(pending, 0o600);
  const outcome = await ensureOperator(deps, undefined, now, secret);
  if (outcome.kind !== 'generated') {
    await unlink(pending);
    return undefined;
  }
  await rename(pending, path);
  return { secret, path };
}

/** A pending key the database knows (its start was killed after the commit) is put in place; any other is removed. */
async function recoverPendingKey(db: SqlDatabase, pending: string, path: string): Promise<MadeOperatorKey | undefined> {
  const secret = (await readFile(pending, 'utf8').catch(() => undefined))?.trim();
  if (secret === undefined) return undefined;
  const known = isWellFormedSecret(secret) && (await findApiKeyByHash(db, hashApiKeySecret(secret))) !== undefined;
  const inPlace = (await readFile(path, 'utf8').catch(() => undefined)) !== undefined;
  if (!known || inPlace) {
    await unlink(pending);
    return undefined;
  }
  await rename(pending, path);
  return { secret, path };
}
