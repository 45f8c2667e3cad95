import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliBundleManifest, cliBundleFolder, manifestFile } from '../bin/cli-bundle.js';
import { bundleSource, workspaceRoot } from './bundle-source.ts';

// The `hallmark` command's bundle (bin/cli-bundle.js says when it is used): src/cli.ts and the
// workspace source it imports, one chunk a command, so a command starts without tsx transpiling
// and resolving the module graph (about 0.4 against 1 s for `hallmark keys list`). Run by the
// root's postinstall (the README's install) and by `pnpm build`.
//
// Each build goes to a folder of its own under builds/, and current.json is renamed into place to
// name it: a command already running (a `hallmark start` during a reinstall) keeps loading its
// chunks from its own build, and two installs at once each finish theirs. Builds other than the
// current one are removed once 30 days old (a few MB each). Failing to bundle fails nothing: the command then runs
// its sources through tsx, and this says so.

const keptForMs = 30 * 24 * 60 * 60 * 1_000;

/** The workspace's own files that decide what the bundle resolves to and how it is transpiled. */
async function settingsFiles(): Promise<string[]> {
  const files = ['pnpm-lock.yaml', 'package.json', 'tsconfig.base.json', 'tsconfig.json'];
  for (const group of ['apps', 'packages', 'services']) {
    for (const member of await readdir(join(workspaceRoot, group))) files.push(join(group, member, 'package.json'));
  }
  return files;
}

async function build(): Promise<void> {
  const folder = cliBundleFolder();
  const started = Date.now();
  const name = `${started}-${process.pid}`;
  const outDir = join(folder, 'builds', name);
  await mkdir(outDir, { recursive: true });
  const sources = await bundleSource({
    entryPoints: { cli: fileURLToPath(new URL('../src/cli.ts', import.meta.url)) },
    outDir,
    // `hallmark --version` loads no database driver, `hallmark keys` no web server: cli.ts imports each command when it runs.
    splitting: true,
  });
  const inputs: CliBundleManifest['inputs'] = [];
  for (const path of [...sources.map((source) => relative(workspaceRoot, source)), ...(await settingsFiles())]) {
    const stats = await stat(join(workspaceRoot, path)).catch(() => undefined);
    if (!stats) continue; // a member without package.json is no member
    if (stats.mtimeMs >= started) throw new Error(`${path} changed while it was bundled; run the install again`);
    inputs.push([path, stats.mtimeMs, stats.size]);
  }
  const manifest: CliBundleManifest = { build: name, root: workspaceRoot, inputs };
  const next = join(folder, `${manifestFile}.${name}`);
  await writeFile(next, `${JSON.stringify(manifest)}\n`);
  await rename(next, join(folder, manifestFile));
  for (const old of await readdir(join(folder, 'builds'))) {
    const made = Number(old.split('-')[0]);
    if (old !== name && Number.isFinite(made) && started - made > keptForMs)
      await rm(join(folder, 'builds', old), { recursive: true, force: true });
  }
}

try {
  await build();
} catch (error) {
  process.stderr.write(
    `hallmark: the command's bundle was not made (${(error as Error).message}); "hallmark" runs its sources through tsx, which starts slower\n`,
  );
}
