import { type LogDifference, migrateCompliance, rebuildMerkleProjection } from '@hallmark/compliance-service';
import type { EventStore } from '@hallmark/event-store';
import { createProgress, type Progress } from '../progress.ts';
import { CommandError } from './command-error.ts';
import type { CommandIo } from './command-io.ts';
import { connectOperatorDatabase } from './operator-database.ts';
import { UsageError } from './usage-error.ts';

/** The event store with every page the rebuild reads counted on the bar. */
function countingReads(eventStore: EventStore, progress: Progress): EventStore {
  // The stores are plain objects of closures (no `this`), so a copy with one member replaced behaves as the original.
  return {
    ...eventStore,
    async readAll(options) {
      const page = await eventStore.readAll(options);
      progress.advance(page.events.length);
      return page;
    },
  };
}

/** How many differing assets the refusal names; the count covers all. */
const differencesShown = 20;

const reasons: Record<LogDifference['reason'], string> = {
  EVENTS_MISSING: 'the log recorded events the store no longer holds',
  OWNER_CHANGED: 'the log recorded it for another owner than its events name',
  EVENTS_CHANGED: 'its events no longer hash to the leaves the log recorded',
};

function refusal(differences: readonly LogDifference[]): string {
  const shown = differences
    .slice(0, differencesShown)
    .map((d) => `  ${d.assetId}: ${reasons[d.reason]} (log ${d.loggedSize} leaves, events ${d.rebuiltSize})`);
  const more = differences.length > differencesShown ? [`  … and ${differences.length - differencesShown} more`] : [];
  return [
    `The Merkle log differs from the events for ${differences.length} asset${differences.length === 1 ? '' : 's'}; it was left as it was.`,
    ...shown,
    ...more,
    'A rebuild would erase this evidence (GET /api/v1/compliance/{assetId}/verify reports it as LOG_MISMATCH).',
    'To replace the log anyway (for instance after restoring the events from an older backup), run it again with --accept-differences.',
  ].join('\n');
}

/**
 * `hallmark projections rebuild [--accept-differences]`: works on the database itself (the product
 * stopped), so a projection can be rebuilt when the product cannot start or answer. The log is
 * replaced only when the replay reproduces every tree it recorded (merkle-rebuild.ts).
 */
export async function projectionsCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'rebuild') throw new UsageError('the projections command takes one action: rebuild');
  const unknown = rest.find((arg) => arg !== '--accept-differences');
  if (unknown !== undefined) throw new UsageError(`projections rebuild takes one option, --accept-differences (not ${unknown})`);
  const acceptDifferences = rest.length > 0;
  const connection = await connectOperatorDatabase(env, 'projections rebuild');
  let progress: Progress | undefined;
  try {
    // The events live in KurrentDB when HALLMARK_ESDB_URL is set, as in the running services; there
    // the total is not known in advance and the bar shows the count alone.
    const total = env.HALLMARK_ESDB_URL
      ? undefined
      : Number(
          (
            await connection.db.query<{ events: string }>(
              // Packed events count as their pack's size (event store migration 0003).
              `SELECT ((SELECT count(*) FROM events) + (SELECT COALESCE(sum(size), 0) FROM event_packs))::text AS events`,
            )
          )[0]?.events,
        );
    progress = createProgress({ label: 'replaying', unit: 'events', total, stream: io.terminal });
    await migrateCompliance(connection.db);
    const started = Date.now();
    const rebuilt = await rebuildMerkleProjection(connection.db, countingReads(connection.eventStore, progress), {
      acceptDifferences,
    });
    progress.finish();
    if (rebuilt.outcome === 'differs') throw new CommandError(refusal(rebuilt.differences));
    if (rebuilt.outcome === 'moved') {
      throw new CommandError(
        'The Merkle projection moved on while the rebuild replayed (a compliance-service still running, or another rebuild that finished first); the log was left as it was. Stop the product (scale compliance-service to zero) and run it again.',
      );
    }
    const { events, differences } = rebuilt;
    const replaced =
      differences.length > 0
        ? ` (replacing the log of ${differences.length} asset${differences.length === 1 ? '' : 's'} that differed)`
        : '';
    io.out(
      `Rebuilt the Merkle projection from ${events} event${events === 1 ? '' : 's'} in ${Date.now() - started} ms${replaced}.\n`,
    );
  } finally {
    progress?.finish();
    await connection.close();
  }
}
