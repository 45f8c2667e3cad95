import { cpus, loadavg, totalmem } from 'node:os';
import { describeReport, idempotencyLeaseMs, runFaultSuite, startFaultEnvironment } from './suite.ts';

// `pnpm faults`: the long fault-injection run (issue #17; docs/RELIABILITY.md). More clients, a
// longer load and every fault repeated (FAULT_ROUNDS, FAULT_CLIENTS, FAULT_SETTLE_MS). Prints the
// figures and exits 1 when a write was lost or duplicated, a check failed or a fault was not
// recovered from within FAULT_RECOVER_BOUND_MS.

const number = (name: string, fallback: number) => {
  const value = process.env[name];
  return value === undefined ? fallback : Number(value);
};
const options = {
  clients: number('FAULT_CLIENTS', 16),
  settleMs: number('FAULT_SETTLE_MS', 8_000),
  rounds: number('FAULT_ROUNDS', 3),
  batchSize: number('FAULT_BATCH_SIZE', 20),
  recoverBoundMs: number('FAULT_RECOVER_BOUND_MS', 30_000),
  retryForMs: 2 * idempotencyLeaseMs,
  log: (line: string) => console.log(`[${new Date().toISOString()}] ${line}`),
};

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}; node ${process.version}; ${new Date().toISOString()}`,
);
console.log(`options: ${JSON.stringify({ ...options, log: undefined })}`);
const environment = await startFaultEnvironment();
let failed = true;
try {
  const report = await runFaultSuite(environment, options);
  console.log(describeReport(report).join('\n'));
  const recoveries = report.recoveries.map((entry) => entry.recoverMs);
  console.log(
    `time to recover: median ${recoveries.sort((a, b) => a - b)[Math.floor(recoveries.length / 2)]} ms, max ${Math.max(...recoveries)} ms over ${recoveries.length} faults`,
  );
  failed = report.lost.length > 0 || report.duplicates.length > 0 || report.problems.length > 0 || report.serverErrors.length > 0;
} finally {
  await environment.stop();
}
process.exit(failed ? 1 : 0);
