import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createPostgresDatabase, type SqlDatabase } from '@hallmark/sql';
import { freePort } from '../support/distributed-product.ts';
import { waitFor } from '../support/wait.ts';

// Servers the fault suite owns, so it may restart them: a nats-server with JetStream and a
// PostgreSQL cluster, each on a free loopback port and a temporary folder. The machine's shared
// servers are never stopped or restarted.

const run = promisify(execFile);

export interface OwnedServer {
  url: string;
  /** Stops the server as a crash would (SIGKILL / immediate shutdown) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** `/usr/sbin/nats-server -a 127.0.0.1 -p <free port> -js -sd <tmpdir>`. */
export async function startOwnNats(
  binary = process.env.HALLMARK_FAULTS_NATS_SERVER ?? '/usr/sbin/nats-server',
): Promise<OwnedServer> {
  const dir = await mkdtemp(join(tmpdir(), 'hallmark-faults-nats-'));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess;
  const start = async () => {
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await waitFor(
      'nats-server to listen',
      async () => {
        const { connect } = await import('node:net');
        return await new Promise<true | undefined>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(undefined));
        });
      },
      { timeoutMs: 15_000, intervalMs: 50 },
    );
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The first PostgreSQL under /usr/lib/postgresql/<version>/bin, newest first. */
async function postgresBin(): Promise<string> {
  if (process.env.HALLMARK_FAULTS_PG_BIN) return process.env.HALLMARK_FAULTS_PG_BIN;
  const versions = (await readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('no PostgreSQL under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export interface OwnedPostgres extends OwnedServer {
  /** A new empty database on this cluster. */
  createDatabase(name: string): Promise<string>;
  /** pg_terminate_backend on every connection to that database (not this cluster's others); how many. */
  terminateBackends(database: string): Promise<number>;
}

/**
 * A PostgreSQL cluster of the suite's own: initdb (trust, loopback only) and pg_ctl, run as the
 * `postgres` user when this process is root (initdb refuses root). fsync is off: the cluster is
 * thrown away, and a restart here is an immediate shutdown (a crash and recovery), not a power cut.
 */
export async function startOwnPostgres(): Promise<OwnedPostgres> {
  const bin = await postgresBin();
  const dir = await mkdtemp(join(tmpdir(), 'hallmark-faults-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', `${bin}/${command}`, ...args]) : run(`${bin}/${command}`, args);
  const data = join(dir, 'data');
  const port = await freePort();
  await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => as('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stopNow = (mode: 'immediate' | 'fast') => as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = async <T>(work: (client: SqlDatabase) => Promise<T>) => {
    const client = createPostgresDatabase({ connectionString: url, applicationName: 'hallmark-faults-admin' });
    try {
      return await work(client);
    } finally {
      await client.close();
    }
  };
  return {
    url,
    async createDatabase(name) {
      if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await admin((client) => client.query(`CREATE DATABASE "${name}"`));
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    terminateBackends: (database) =>
      admin(
        async (client) =>
          (
            await client.query(
              'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
              [database],
            )
          ).length,
      ),
    async restart() {
      await stopNow('immediate');
      await start();
    },
    async stop() {
      await stopNow('fast').catch(() => stopNow('immediate'));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
