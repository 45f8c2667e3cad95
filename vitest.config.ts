import { defineConfig } from 'vitest/config';

// Three kinds of test (see docs/ARCHITECTURE.md): pure unit tests beside the code, integration tests
// against the real PostgreSQL, Redis and NATS of the machine, and end-to-end tests over HTTP.
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
          // Bundles the services' source once for the run: the distributed form's processes start
          // from it rather than transpiling under tsx at every start (test/support/build-services.ts).
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // The end-to-end suites start whole process trees; two at once would starve a 2-core machine.
          fileParallelism: false,
          // One worker runs every file, keeping the modules it has loaded: each file imported the whole
          // product afresh (1.5-2.5 s a file, 40 files). Every file starts and stops its own products;
          // no file mocks a module or changes the environment of the process.
          isolate: false,
          sequence: { groupOrder: 1 },
          maxWorkers: 1,
        },
      },
    ],
  },
});
