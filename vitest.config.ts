import { defineConfig } from 'vitest/config';

// Three kinds of test (see docs/ARCHITECTURE.md): pure unit tests beside the code, integration tests
// against the real PostgreSQL, Redis and NATS of the machine, and end-to-end tests over HTTP.

/** End-to-end suites that kill processes or assert on time: run one at a time, after the others. */
const timedEndToEnd = [
  'test/e2e/faults.test.ts',
  'test/e2e/write-faults.test.ts',
  'test/e2e/transfer-faults.test.ts',
  'test/e2e/embedded-restart.test.ts',
  'test/e2e/hostile-limits.test.ts',
  'test/e2e/hostile-upload-slots.test.ts',
  'test/e2e/key-propagation.test.ts',
  'test/e2e/console-sessions.test.ts',
  'test/e2e/webhooks.test.ts',
  'test/e2e/idempotency.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.unit.test.ts',
            'services/*/src/**/*.unit.test.ts',
            'apps/*/src/**/*.unit.test.ts',
            'infra/**/*.unit.test.ts',
          ],
          // Property tests run thousands of cases; on a loaded two-core machine that can pass 5 s.
          testTimeout: 30_000,
          // Unit and integration files first, two at a time (one a core); then the end-to-end ones alone.
          sequence: { groupOrder: 0 },
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'int',
          include: [
            'packages/*/src/**/*.int.test.ts',
            'services/*/src/**/*.int.test.ts',
            'apps/*/src/**/*.int.test.ts',
            'infra/**/*.int.test.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: timedEndToEnd,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each suite starts its own product (its own database, NATS namespace, Redis prefix and data
          // folder), so two run at once; much of their time is waiting on sockets and timers.
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e-alone',
          include: timedEndToEnd,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Suites that kill and restart processes or measure time (a second's propagation, a rate
          // window, a lease, a session's expiry): alone, last, so another suite's load cannot bend them.
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          maxWorkers: 1,
        },
      },
    ],
  },
});
