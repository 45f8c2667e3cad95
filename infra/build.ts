import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The production build (`pnpm build`): one TypeScript program over every package's, service's and
// app's src/ (tsconfig.build.json), emitted into each one's own dist/ (packages/sql/src/x.ts →
// packages/sql/dist/x.js, source maps beside). dist/ sits at the depth of src/, so code that reads
// files relative to import.meta.url (the migrations, `../migrations`) finds them from either, and
// each package's node_modules still resolves its dependencies. Production runs
// `node --conditions=hallmark-compiled services/<name>/dist/main.js`: under that export condition
// every `@hallmark/*` package resolves to its dist/index.js. One program rather than `tsc -b` over
// per-package projects: no declaration files to emit, so the build takes one pass (about 15 s of CPU here).
// Types are checked by `pnpm typecheck`, not here: the build fails on syntax or configuration errors only.

const root = fileURLToPath(new URL('..', import.meta.url));
const groups = ['packages', 'services', 'apps'];

/** `<group>/<name>/src/<rest>` → `<group>/<name>/dist/<rest>`; anything else is a mistake in the config. */
export function distPathOf(emitted: string, outDir: string): string {
  const parts = relative(outDir, emitted).split(sep);
  const [group, name, src, ...rest] = parts;
  if (!group || !groups.includes(group) || !name || src !== 'src' || rest.length === 0) {
    throw new Error(`The build emitted ${emitted}, outside any <group>/<name>/src folder: check tsconfig.build.json's include.`);
  }
  return join(root, group, name, 'dist', ...rest);
}

/** Compiles every workspace member's src/ into its dist/. Resolves with the number of files written; fails with the compiler's diagnostics. */
export function build(): number {
  const configPath = join(root, 'tsconfig.build.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.formatDiagnostic(read.error, formatHost));
  const config = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  if (config.errors.length > 0) throw new Error(ts.formatDiagnostics(config.errors, formatHost));
  const outDir = config.options.outDir ?? join(root, 'dist');

  // Only the dist/ folders this build fills: the console's (apps/console, built by Vite) is left alone.
  const compiles = (member: string) => config.fileNames.some((file) => file.startsWith(`${member}/src/`));
  for (const group of groups) {
    for (const name of readdirSync(join(root, group))) {
      const dist = join(root, group, name, 'dist');
      if (existsSync(dist) && compiles(join(root, group, name))) rmSync(dist, { recursive: true, force: true });
    }
  }

  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const problems = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics()];
  if (problems.length > 0) throw new Error(ts.formatDiagnostics(problems, formatHost));
  let written = 0;
  const result = program.emit(undefined, (fileName, text) => {
    const target = distPathOf(fileName, outDir);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, fileName.endsWith('.map') ? movedSourceMap(text, fileName, target) : text);
    written += 1;
  });
  if (result.emitSkipped || result.diagnostics.length > 0) {
    throw new Error(`The build emitted nothing: ${ts.formatDiagnostics(result.diagnostics, formatHost)}`);
  }
  return written;
}

/** A source map names its sources relative to where tsc meant to write it; point them at src/ from dist/. */
function movedSourceMap(text: string, emittedAt: string, writtenAt: string): string {
  const map = JSON.parse(text) as { sources: string[] };
  map.sources = map.sources.map((source) =>
    relative(dirname(writtenAt), resolve(dirname(emittedAt), source))
      .split(sep)
      .join('/'),
  );
  return JSON.stringify(map);
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => root,
  getNewLine: () => '\n',
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  try {
    const written = build();
    process.stdout.write(
      `build: ${written} files in packages/*/dist, services/*/dist, apps/*/dist (${Date.now() - started} ms)\n`,
    );
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
