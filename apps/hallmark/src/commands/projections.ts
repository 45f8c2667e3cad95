import { migrateCompliance, rebuildMerkleProjection } from '@hallmark/compliance-service';
import type { EventStore } from '@hallmark/event-store';
import { createProgress, type Progress } from '../progress.ts';
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

/**
 * `hallmark projections rebuild`: works on the database itself (the product stopped), so a
 * projection can be rebuilt when the product cannot start or answer.
 */
export async function projectionsCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'rebuild' || rest.length > 0) throw new UsageError('the projections command takes one action: rebuild');
  const connection = await connectOperatorDatabase(env, 'projections rebuild');
  let progress: Progress | undefined;
  try {
    // The events live in KurrentDB when HALLMARK_ESDB_URL is set, as in the running services; there
    // the total is not known in advance and the bar shows the count alone.
    const total = env.HALLMARK_ESDB_URL
      ? undefined
      : Number((await connection.db.query<{ events: string }>('SELECT count(*)::text AS events FROM events'))[0]?.events);
    progress = createProgress({ label: 'replaying', unit: 'events', total, stream: io.terminal });
    await migrateCompliance(connection.db);
    const started = Date.now();
    const { events } = await rebuildMerkleProjection(connection.db, countingReads(connection.eventStore, progress));
    progress.finish();
    io.out(`Rebuilt the Merkle projection from ${events} event${events === 1 ? '' : 's'} in ${Date.now() - started} ms.\n`);
  } finally {
    progress?.finish();
    await connection.close();
  }
}
