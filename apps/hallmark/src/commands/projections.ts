import { migrateCompliance, rebuildMerkleProjection } from '@hallmark/compliance-service';
import { connectOperatorDatabase } from './operator-database.ts';
import { UsageError } from './usage-error.ts';

export async function projectionsCommand(args: string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'rebuild' || rest.length > 0) throw new UsageError('the projections command takes one action: rebuild');
  const connection = await connectOperatorDatabase(env, 'projections rebuild');
  // The events live in KurrentDB when HALLMARK_ESDB_URL is set, as in the running services.
  const { eventStore } = connection;
  try {
    await migrateCompliance(connection.db);
    const started = Date.now();
    const { events } = await rebuildMerkleProjection(connection.db, eventStore);
    out(`Rebuilt the Merkle projection from ${events} event${events === 1 ? '' : 's'} in ${Date.now() - started} ms.\n`);
  } finally {
    await connection.close();
  }
}
