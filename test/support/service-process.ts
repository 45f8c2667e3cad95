import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundlePath } from './build-services.ts';
import { waitFor } from './wait.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Every line the process wrote to standard output, parsed where it is JSON. */
  lines: Array<Record<string, unknown>>;
  stderr: string[];
  exited: Promise<number | null>;
  /** Sends the signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `services/<service>/src/main.ts` as its own OS process, as the distributed form runs it.
 * Under vitest, from the bundle of that source that test/support/global-setup.ts built for this
 * run (HALLMARK_TEST_SERVICE_BUNDLES, see build-services.ts): no transpiling at every start.
 * Elsewhere (the fault runner, test/faults), one node process with tsx as its loader (the tsx CLI
 * would put a wrapper process in between).
 */
export function startServiceProcess(service: string, env: Record<string, string>, name = service): ServiceProcess {
  const bundles = process.env.HALLMARK_TEST_SERVICE_BUNDLES;
  // Node's own options for every process, which NODE_OPTIONS refuses (a benchmark's profile:
  // BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/profiles').
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const args = bundles
    ? [...nodeArgs, '--enable-source-maps', bundlePath(bundles, service)]
    : [...nodeArgs, '--import', 'tsx', `services/${service}/src/main.ts`];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ text: line });
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name,
    child,
    lines,
    stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Waits for the gateway at `gatewayUrl` to be ready and for each of `services` to answer a ping
 * through it; on a timeout, prints every started process's standard error and rethrows.
 */
export async function untilServicesAnswer(
  gatewayUrl: string,
  services: readonly string[],
  started: readonly ServiceProcess[],
): Promise<void> {
  try {
    await waitFor('the gateway to be ready', async () => ((await fetch(`${gatewayUrl}/ready`)).ok ? true : undefined), {
      timeoutMs: 60_000,
    });
    for (const service of services) {
      await waitFor(
        `${service} to answer through the gateway`,
        async () => ((await fetch(`${gatewayUrl}/api/v1/system/ping/${service}`, { method: 'POST' })).ok ? true : undefined),
        { timeoutMs: 60_000 },
      );
    }
  } catch (error) {
    for (const one of started) console.error(`--- ${one.name} (exit ${one.child.exitCode})\n${one.stderr.join('')}`);
    throw error;
  }
}
