import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbedded } from './embedded.ts';

const bin = fileURLToPath(new URL('../bin/hallmark.js', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hallmark-edge-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('the embedded form on a shared machine', () => {
  it('listens on 127.0.0.1 unless HALLMARK_HOST says otherwise; narrows its data folder to 0700; the new operator key goes to a 0600 file', async () => {
    const parent = await tempDir();
    const dataDir = join(parent, 'data');
    // An existing folder others can read is narrowed.
    await mkdir(dataDir, { mode: 0o755 });
    await chmod(dataDir, 0o755);
    const lines: string[] = [];
    const product = await startEmbedded(
      { PATH: process.env.PATH, PORT: '0', HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'info' },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
    cleanups.push(() => product.stop());
    const listening = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'listening');
    const address = new URL(listening.address);
    expect(address.hostname).toBe('127.0.0.1');
    const port = Number(address.port);
    expect(await accepts('127.0.0.1', port)).toBe(true);
    // Any other address of this machine is refused.
    const external = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && entry.family === 'IPv4' && !entry.internal);
    if (external) expect(await accepts(external.address, port)).toBe(false);

    expect(await modeOf(dataDir)).toBe(0o700);
    expect(product.operatorKeyFile).toBe(join(dataDir, 'operator-key'));
    expect(await modeOf(join(dataDir, 'operator-key'))).toBe(0o600);
    expect((await readFile(join(dataDir, 'operator-key'), 'utf8')).trim()).toBe(product.generatedOperatorKey);
    expect(product.generatedOperatorKey).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(lines.join('')).not.toContain(product.generatedOperatorKey);
  });

  it('puts in place the operator key of a first start killed after its commit, and removes a pending key the database does not know', async () => {
    const dataDir = join(await tempDir(), 'data');
    const env = { PATH: process.env.PATH, PORT: '0', HALLMARK_DATA_DIR: dataDir, HALLMARK_LOG_LEVEL: 'silent' };
    const first = await startEmbedded(env);
    const secret = first.generatedOperatorKey as string;
    await first.stop();
    // What a kill between the database's commit and the rename leaves: the key only in the pending file.
    // Before, the key was written after the commit, so such a kill lost the only copy of it.
    await rename(join(dataDir, 'operator-key'), join(dataDir, '.operator-key.pending'));
    const second = await startEmbedded(env);
    expect(second.operatorKeyFile).toBe(join(dataDir, 'operator-key'));
    expect((await readFile(join(dataDir, 'operator-key'), 'utf8')).trim()).toBe(secret);
    expect(await modeOf(join(dataDir, 'operator-key'))).toBe(0o600);
    await expect(stat(join(dataDir, '.operator-key.pending'))).rejects.toThrow();
    const keys = await fetch(`${second.url}/api/v1/keys`, { headers: { 'x-api-key': secret } });
    expect(keys.status).toBe(200);
    await second.stop();

    // A pending key the database does not know (a start killed before its commit, the operator made
    // since): removed, and no key is made while an operator exists.
    await writeFile(join(dataDir, '.operator-key.pending'), `svc_live_${'ab'.repeat(32)}\n`, { mode: 0o600 });
    const third = await startEmbedded(env);
    cleanups.push(() => third.stop());
    expect(third.generatedOperatorKey).toBeUndefined();
    expect((await readFile(join(dataDir, 'operator-key'), 'utf8')).trim()).toBe(secret);
    await expect(stat(join(dataDir, '.operator-key.pending'))).rejects.toThrow();
  });

  it('`hallmark start` prints where the operator key is, never the key', async () => {
    const dataDir = join(await tempDir(), 'data');
    const child: ChildProcess = spawn(process.execPath, [bin, 'start'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PORT: '0',
        HALLMARK_DATA_DIR: dataDir,
        HALLMARK_LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    });
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const deadline = Date.now() + 60_000;
    while (!stdout.includes('/api/v1/keys') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const keyFile = join(dataDir, 'operator-key');
    expect(stdout).toContain(`is in ${keyFile}`);
    expect(stdout).toContain(`KEY=$(cat ${keyFile})`);
    const secret = (await readFile(keyFile, 'utf8')).trim();
    expect(secret).toMatch(/^svc_live_[0-9a-f]{64}$/);
    expect(stdout).not.toContain(secret);
    expect(stdout).not.toMatch(/svc_(live|test)_[0-9a-f]{64}/);
    expect(await modeOf(keyFile)).toBe(0o600);
    expect(await modeOf(dataDir)).toBe(0o700);
  });
});
