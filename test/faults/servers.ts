import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  /** A new empty database on this cluster (its URL carries the TLS parameters of `url`). */
  createDatabase(name: string): Promise<string>;
  /** pg_terminate_backend on every connection to that database (not this cluster's others); how many. */
  terminateBackends(database: string): Promise<number>;
}

export interface OwnPostgresOptions {
  /**
   * Serve TLS with this certificate and key (PEM files, copied into the cluster's folder with the
   * key at mode 0600, as PostgreSQL demands) and refuse every TCP connection without it (pg_hba:
   * `hostssl` only, `hostnossl … reject`). The cluster's URLs then carry
   * `sslmode=verify-full&sslrootcert=<caFile>`.
   */
  tls?: { certFile: string; keyFile: string; caFile: string };
  /** Addresses to listen on; default 127.0.0.1 only. */
  listenAddresses?: string[];
}

/** Any pg_ctl or initdb run longer than this is stuck: fail rather than hang the caller. */
const commandTimeoutMs = 90_000;

/**
 * A PostgreSQL cluster of the suite's own: initdb (trust, loopback only) and pg_ctl, run as the
 * `postgres` user when this process is root (initdb refuses root). fsync is off: the cluster is
 * thrown away, and a restart here is an immediate shutdown (a crash and recovery), not a power cut.
 * If it does not start, its folder is removed before the error is thrown.
 */
export async function startOwnPostgres(options: OwnPostgresOptions = {}): Promise<OwnedPostgres> {
  const bin = await postgresBin();
  const dir = await mkdtemp(join(tmpdir(), 'hallmark-faults-pg-'));
  const asRoot = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | undefined;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    owner = { uid: Number(stdout.trim()), gid: Number(gid.trim()) };
    await chown(dir, owner.uid, owner.gid);
  }
  /** A file of the cluster's, readable by the server's user only. */
  const ownFile = async (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    await writeFile(path, content, { mode: 0o600 });
    if (owner) await chown(path, owner.uid, owner.gid);
    return path;
  };
  const as = (command: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', `${bin}/${command}`, ...args], { timeout: commandTimeoutMs })
      : run(`${bin}/${command}`, args, { timeout: commandTimeoutMs });
  const data = join(dir, 'data');
  const port = await freePort();
  const listen = (options.listenAddresses ?? ['127.0.0.1']).join(',');
  let serverOptions = `-p ${port} -k ${dir} -c listen_addresses=${listen} -c fsync=off -c max_connections=200`;
  const query = options.tls ? `?sslmode=verify-full&sslrootcert=${encodeURIComponent(options.tls.caFile)}` : '';
  const start = () => as('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stopNow = (mode: 'immediate' | 'fast') => as('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  try {
    await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    if (options.tls) {
      const cert = await ownFile('server.pem', await readFile(options.tls.certFile));
      const key = await ownFile('server.key', await readFile(options.tls.keyFile));
      // Local (Unix socket) connections stay open to the test; every TCP one must be TLS.
      const hba = await ownFile(
        'pg_hba.conf',
        [
          'local all all trust',
          'hostssl all all 127.0.0.1/32 trust',
          'hostssl all all ::1/128 trust',
          'hostnossl all all 0.0.0.0/0 reject',
          'hostnossl all all ::/0 reject',
          '',
        ].join('\n'),
      );
      serverOptions += ` -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key} -c hba_file=${hba}`;
    }
    await start();
  } catch (error) {
    // pg_ctl may give up waiting while the server still comes up: stop whatever runs there.
    await stopNow('immediate').catch(() => {});
    // The server's own words (a bad certificate, a taken port) are in its log, which goes with the folder.
    const log = await readFile(join(dir, 'log'), 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${log.trim().split('\n').slice(-3).join(' | ') || 'see cause'}`, {
      cause: error,
    });
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres${query}`;
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
      return `postgres://postgres@127.0.0.1:${port}/${name}${query}`;
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
