import { readFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Bundles the workspace's own TypeScript (apps/*/src, services/*/src, packages/*/src: what tsx would
// run, transpiled by the same esbuild) into one JavaScript file per entry point, so a process starts
// without transpiling and resolving the whole module graph again (about a second of CPU). Every other
// package stays an import of the file Node itself would load, by absolute path, so a bundle can live
// outside the workspace; with `bundleDependencies` (the tests' service bundles) the packages are
// bundled too, but those named there. Code that finds files relative to its own module (`new URL('../migrations',
// import.meta.url)`, worker files) gets the URL of its source file, so it reads what it reads under
// tsx. Used by the `hallmark` command (build-cli.ts) and by the end-to-end tests' service processes
// (test/support/build-services.ts).

/** The part of esbuild's API used here (esbuild is tsx's dependency, not the workspace's, so its types are not at hand). */
interface Esbuild {
  build(
    options: Record<string, unknown> & { plugins: EsbuildPlugin[] },
  ): Promise<{ metafile?: { inputs: Record<string, unknown> } }>;
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

export const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url));

export interface BundleOptions {
  /** Output name (without extension) → entry file, absolute. */
  entryPoints: Record<string, string>;
  outDir: string;
  /**
   * Each dynamic `import()` of workspace source its own file (chunk), loaded when the import runs:
   * what a module imports from other packages then loads with it, not at start.
   */
  splitting?: boolean;
  /**
   * Bundles the packages of node_modules too, but those named here (and their subpaths), which
   * are loaded from node_modules at run time (WebAssembly or native parts, optional clients).
   */
  bundleDependencies?: { except: readonly string[] };
}

/**
 * What each file of a bundle that holds packages (bundleDependencies) starts with: `require`,
 * `__filename` and `__dirname` as a CommonJS module in the bundle's place would have them. No
 * workspace module may declare these names at its top level (esbuild cannot see the banner).
 */
const dependenciesBanner = [
  "import { createRequire as createRequireOfBundle } from 'node:module';",
  "import { dirname as dirnameOfBundle } from 'node:path';",
  "import { fileURLToPath as fileURLToPathOfBundle } from 'node:url';",
  'const require = createRequireOfBundle(import.meta.url);',
  'const __filename = fileURLToPathOfBundle(import.meta.url);',
  'const __dirname = dirnameOfBundle(__filename);',
].join(' ');

/**
 * Writes `<outDir>/<name>.mjs` (and its source map) for each entry point. Resolves with the
 * workspace source files the bundles were made from (absolute paths): when one of them changes,
 * the bundles are stale. Fails on any esbuild error.
 */
export async function bundleSource({
  entryPoints,
  outDir,
  splitting = false,
  bundleDependencies,
}: BundleOptions): Promise<string[]> {
  const requireFromTsx = createRequire(createRequire(join(workspaceRoot, 'package.json')).resolve('tsx/package.json'));
  const esbuild = (await import(pathToFileURL(requireFromTsx.resolve('esbuild')).href)) as Esbuild;
  const builtins = new Set(builtinModules);
  const result = await esbuild.build({
    entryPoints,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    absWorkingDir: workspaceRoot,
    bundle: true,
    splitting,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    // A CommonJS package bundled into an ES module calls `require` for Node's own modules, and may
    // name `__dirname` (ioredis' friendly error stacks): both as a CommonJS module of the bundle's
    // place would have them.
    ...(bundleDependencies ? { banner: { js: dependenciesBanner } } : {}),
    platform: 'node',
    target: 'node20',
    // Node's own resolution: its conditions (no "module"), "main" only for packages without exports.
    conditions: [],
    mainFields: ['main'],
    // Names as the source has them (class and function .name), whatever the bundle renames to avoid clashes.
    keepNames: true,
    sourcemap: 'linked',
    // Stack traces need the mappings, not the sources: Node parses the whole map at start (and
    // again for the first stack trace), which the packages' sources made several megabytes.
    ...(bundleDependencies ? { sourcesContent: false } : {}),
    metafile: true,
    logLevel: 'error',
    plugins: [
      {
        name: 'hallmark-workspace-source',
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
            const loadedAtRunTime = bundleDependencies?.except.some(
              (name) => args.path === name || args.path.startsWith(`${name}/`),
            );
            // An optional package that is not installed (pg-native) fails where it is required, at run time, as it would unbundled.
            if (loadedAtRunTime && resolved.errors.length > 0) return { path: args.path, external: true };
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            if (bundleDependencies && !loadedAtRunTime) return { path: resolved.path };
            // A bundled CommonJS package's `require` of a package left out takes a path, not a URL.
            if (args.kind === 'require-call') return { path: resolved.path, external: true };
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
  return Object.keys(result.metafile?.inputs ?? {})
    .filter((input) => !input.includes('node_modules/'))
    .map((input) => resolve(workspaceRoot, input));
}
