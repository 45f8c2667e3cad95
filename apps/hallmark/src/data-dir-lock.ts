import { randomBytes } from 'node:crypto';
import { link, lstat, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Who holds the embedded data folder: PGlite must be opened by one process at a time, or a second
 * one misses the first one's writes and can corrupt the files. The holder writes its pid to
 * `<data dir>/hallmark.lock` (created exclusively, mode 0600); the server adds its URL once it listens.
 */
export interface LockHolder {
  pid: number;
  holder: 'server' | 'cli';
  /** The server's address (`http://localhost:8080`), once it listens. */
  url?: string | undefined;
  startedAt: string;
}

/** The data folder is held by another live process. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly lockFile: string,
    readonly holder: LockHolder,
  ) {
    super(
      holder.holder === 'server'
        ? `a Hallmark server (pid ${holder.pid}${holder.url ? `, ${holder.url}` : ''}) is using ${lockFile.replace(/\/hallmark\.lock$/, '')}`
        : `the hallmark command (pid ${holder.pid}) is using ${lockFile.replace(/\/hallmark\.lock$/, '')}; wait for it to finish`,
    );
  }
}

export interface DataDirLock {
  readonly file: string;
  /** Records the server's URL for the CLI to find. */
  setUrl(url: string): Promise<void>;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

export const lockFileOf = (dataDir: string) => join(dataDir, 'hallmark.lock');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why the server a lock file names is not to be sent a key, or undefined when it may be: the command
 * sends the operator's (or an API) key to the URL in `<data dir>/hallmark.lock`, and the data folder
 * defaults to `./.hallmark`, so a lock file planted in a checkout, an archive or a shared folder could
 * name anyone's address. A server of ours writes the file itself, mode 0600, owned by its user, with
 * its own pid and a loopback URL (`http://localhost:<port>`; embedded.ts).
 */
export async function whyNotTrusted(dataDir: string, holder: LockHolder): Promise<string | undefined> {
  const file = lockFileOf(dataDir);
  const stats = await lstat(file).catch(() => undefined);
  if (!stats?.isFile()) return `${file} is not a file of ours`;
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) return `${file} belongs to another user`;
  if ((stats.mode & 0o077) !== 0)
    return `${file} may be read or written by others (mode ${(stats.mode & 0o777).toString(8)}), not as a server writes it`;
  try {
    process.kill(holder.pid, 0);
  } catch {
    return `its process (pid ${holder.pid}) is not one of this user's`;
  }
  let host: string;
  try {
    host = new URL(holder.url ?? '').hostname;
  } catch {
    return `its address ${JSON.stringify(holder.url)} is not a URL`;
  }
  return ['localhost', '127.0.0.1', '[::1]'].includes(host)
    ? undefined
    : `its address ${holder.url} is not this machine's loopback`;
}

function parse(text: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(text) as LockHolder;
    return Number.isInteger(holder.pid) && holder.pid > 0 ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** The live holder of the data folder, or undefined when there is none (no file, or its process is dead). */
export async function readLockHolder(dataDir: string): Promise<LockHolder | undefined> {
  const text = await readFile(lockFileOf(dataDir), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  const holder = text === undefined ? undefined : parse(text);
  return holder && isAlive(holder.pid) ? holder : undefined;
}

/**
 * Takes the data folder for this process. A lock file whose process is dead (a crash, kill -9) is
 * taken over. Rejects with DataDirInUseError when a live process holds it (this one included).
 */
export async function acquireDataDirLock(dataDir: string, holder: LockHolder['holder']): Promise<DataDirLock> {
  const file = lockFileOf(dataDir);
  let record: LockHolder = { pid: process.pid, holder, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify(record));
      } finally {
        await handle.close();
      }
      return {
        file,
        async setUrl(url) {
          record = { ...record, url };
          // Written aside and renamed: a reader never sees half a file.
          const aside = `${file}.${randomBytes(4).toString('hex')}`;
          await writeFile(aside, JSON.stringify(record), { mode: 0o600 });
          await rename(aside, file);
        },
        async release() {
          const current = parse(await readFile(file, 'utf8').catch(() => ''));
          if (current?.pid === process.pid) await unlink(file).catch(() => undefined);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) continue; // released meanwhile: try again
    const existing = parse(text);
    if (existing && isAlive(existing.pid)) throw new DataDirInUseError(file, existing);
    // Stale. Moved aside atomically, so of two processes taking it over at once only one moves it;
    // if what was moved is a live holder's (it took over first), it is put back.
    const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await rename(file, aside);
    } catch {
      continue;
    }
    const moved = parse(await readFile(aside, 'utf8').catch(() => ''));
    if (moved && isAlive(moved.pid)) {
      await link(aside, file).catch(() => undefined);
      await unlink(aside).catch(() => undefined);
      throw new DataDirInUseError(file, moved);
    }
    await unlink(aside).catch(() => undefined);
  }
  throw new Error(`could not take ${file}: other processes keep taking it; try again`);
}
