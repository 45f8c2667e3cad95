import { join } from 'node:path';
import { bundleSource, workspaceRoot as root } from '../../apps/hallmark/scripts/bundle-source.ts';

// The distributed form's processes in the end-to-end tests run from one JavaScript file per
// service, bundled here once per test run (vitest's globalSetup, test/support/global-setup.ts),
// instead of `node --import tsx services/<s>/src/main.ts`, which transpiles and resolves the whole
// module graph again in every process it starts (about a second of CPU each, five processes a
// product). How the bundle is made: apps/hallmark/scripts/bundle-source.ts.

export const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'] as const;

/** Where a service's bundle is written: `<outDir>/<service>.mjs`. */
export function bundlePath(outDir: string, service: string): string {
  return join(outDir, `${service}.mjs`);
}

/**
 * Bundles every service's src/main.ts into outDir, each dynamic import of workspace source a chunk
 * of its own: without, the KurrentDB client (load-kurrent-event-store.ts imports it only when a
 * process is configured for KurrentDB) was loaded by every process at start, its import hoisted to
 * the top of the bundle (about 0.18 s of CPU a process, 0.8 s a distributed product). Fails on any
 * esbuild error.
 */
export async function buildServices(outDir: string): Promise<void> {
  await bundleSource({
    entryPoints: Object.fromEntries(services.map((service) => [service, join(root, 'services', service, 'src', 'main.ts')])),
    outDir,
    splitting: true,
    // The packages too (but those with WebAssembly or native parts, and the optional KurrentDB
    // client): loaded from node_modules, a process spent ~0.4 s of CPU finding and reading their
    // files, a fifth of a distributed product's start (6.6-6.9 s of CPU against 4.8-5.0 bundled).
    bundleDependencies: { except: ['@electric-sql/pglite', '@kurrent/kurrentdb-client', 'pg-native', 'sharp'] },
  });
}
