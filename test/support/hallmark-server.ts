import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { hallmarkBin } from './hallmark-cli.ts';
import { waitFor } from './wait.ts';

/** `hallmark start` as a child process: what a user runs, to stop with a signal or kill. */
export interface HallmarkServer {
  url: string;
  port: number;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its standard error so far (warnings and errors: HALLMARK_LOG_LEVEL is warn unless `env` says otherwise). */
  stderr: string[];
  /** SIGKILL unless it has exited; resolves once it has. */
  dispose(): Promise<void>;
}

/** A port free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns `hallmark start` on `dataDir` (a first start if it is empty) on a free loopback port, with
 * only PATH, HOME and `env` from the environment, without waiting for it: a start to kill at a
 * moment of its own (`startHallmarkServer` waits until it answers).
 */
export async function spawnHallmarkServer(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<Omit<HallmarkServer, 'url'>> {
  const port = await freePort();
  const stderr: string[] = [];
  const child = spawn(process.execPath, [hallmarkBin, 'start'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: String(port),
      HALLMARK_HOST: '127.0.0.1',
      HALLMARK_DATA_DIR: dataDir,
      HALLMARK_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const dispose = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { port, child, exited, stderr, dispose };
}

/** `spawnHallmarkServer`, once /health answers (killed if it exits or does not answer in time). */
export async function startHallmarkServer(
  dataDir: string,
  env: Record<string, string> = {},
  { healthTimeoutMs = 60_000 }: { healthTimeoutMs?: number } = {},
): Promise<HallmarkServer> {
  const spawned = await spawnHallmarkServer(dataDir, env);
  const { child, stderr } = spawned;
  const url = `http://127.0.0.1:${spawned.port}`;
  try {
    await waitFor(
      'the product to answer /health',
      async () => {
        if (child.exitCode !== null) {
          throw new Error(`hallmark start exited with ${child.exitCode}: ${stderr.join('').slice(-2000)}`);
        }
        const response = await fetch(`${url}/health`).catch(() => undefined);
        return response?.ok ? true : undefined;
      },
      { timeoutMs: healthTimeoutMs, intervalMs: 100 },
    );
  } catch (error) {
    await spawned.dispose();
    throw error;
  }
  return { ...spawned, url };
}
