import { readFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The distributed form's processes in the end-to-end tests run from one JavaScript file per
// service, bundled here once per test run (vitest's globalSetup, test/support/global-setup.ts),
// instead of `node --import tsx services/<s>/src/main.ts`, which transpiles and resolves the whole
// module graph again in every process it starts (about a second of CPU each, five processes a
// product). The bundle holds the workspace's own source as it is in the checkout (services/*/src,
// packages/*/src: what tsx would run, transpiled by the same esbuild); every other package stays an
// import of the file Node itself would load, by absolute path, so the bundle can live outside the
// workspace. Code that finds files relative to its own module (`new URL('../migrations',
// import.meta.url)`, worker files) gets the URL of its source file, so it reads what it reads
// under tsx.

/** The part of esbuild's API used here (esbuild is not a dependency of the workspace itself, so its types are not at hand). */
interface Esbuild {
  build(options: Record<string, unknown> & { plugins: EsbuildPlugin[] }): Promise<unknown>;
}
interface EsbuildPlugin {
  name: string;
  setup(build: {
    onResolve(
      options: { filter: RegExp },
      callback: (args: ResolveArgs) => Promise<{ path?: string; external?: boolean; errors?: unknown[] } | undefined>,
    ): void;
    onLoad(
      options: { filter: RegExp },
      callback: (args: { path: string }) => Promise<{ contents: string; loader: string } | undefined>,
    ): void;
    resolve(path: string, options: Omit<ResolveArgs, 'path'>): Promise<{ path: string; errors: unknown[] }>;
  }): void;
}
interface ResolveArgs {
  path: string;
  kind: string;
  importer: string;
  resolveDir: string;
  pluginData?: unknown;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
export const services = ['gateway', 'code-service', 'verify-service', 'auction-service', 'compliance-service'] as const;

/** Where a service's bundle is written: `<outDir>/<service>.mjs`. */
export function bundlePath(outDir: string, service: string): string {
  return join(outDir, `${service}.mjs`);
}

/** Bundles every service's src/main.ts into outDir. Fails on any esbuild error. */
export async function buildServices(outDir: string): Promise<void> {
  // esbuild is tsx's (and vite's) dependency, not the workspace's: load the one tsx runs.
  const requireFromTsx = createRequire(createRequire(join(root, 'package.json')).resolve('tsx/package.json'));
  const esbuild = (await import(pathToFileURL(requireFromTsx.resolve('esbuild')).href)) as Esbuild;
  const builtins = new Set(builtinModules);
  await esbuild.build({
    entryPoints: Object.fromEntries(services.map((service) => [service, join(root, 'services', service, 'src', 'main.ts')])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node's own resolution: its conditions (no "module"), "main" only for packages without exports.
    conditions: [],
    mainFields: ['main'],
    // Names as the source has them (class and function .name), whatever the bundle renames to avoid clashes.
    keepNames: true,
    sourcemap: 'linked',
    logLevel: 'error',
    plugins: [
      {
        name: 'hallmark-test-services',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData === 'resolving') return undefined;
            if (args.path.startsWith('node:') || builtins.has(args.path)) return { path: args.path, external: true };
            if (args.path.startsWith('@hallmark/')) return undefined;
            const resolved = await build.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: 'resolving',
            });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            return { path: pathToFileURL(resolved.path).href, external: true };
          });
          build.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, async (args) => {
            if (args.path.includes('/node_modules/')) return undefined;
            const source = await readFile(args.path, 'utf8');
            const url = pathToFileURL(args.path).href;
            const contents = source
              .replaceAll('import.meta.url', JSON.stringify(url))
              .replaceAll('import.meta.filename', JSON.stringify(args.path))
              .replaceAll('import.meta.dirname', JSON.stringify(fileURLToPath(new URL('.', url)).replace(/\/$/, '')));
            return { contents, loader: args.path.endsWith('ts') ? 'ts' : 'js' };
          });
        },
      },
    ],
  });
}
