import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliBundleManifest, cliBundleFolder, manifestFile } from '../bin/cli-bundle.js';
import { bundleSource, workspaceRoot } from './bundle-source.ts';

// The `hallmark` command's bundle (bin/cli-bundle.js says when it is used): src/cli.ts and the
// workspace source it imports, as one JavaScript file, so a command starts without tsx transpiling
// and resolving the module graph (about 1 s against 0.5 s of CPU for `hallmark keys list`).
// Run by the root's postinstall (the README's install) and by `pnpm build`. Written to a new folder
// and renamed into place, so a command started meanwhile sees the old bundle or the new one.

const started = Date.now();
const folder = cliBundleFolder();
const building = `${folder}.building-${process.pid}`;
await rm(building, { recursive: true, force: true });
await mkdir(building, { recursive: true });
const inputs = await bundleSource({
  entryPoints: { cli: fileURLToPath(new URL('../src/cli.ts', import.meta.url)) },
  outDir: building,
  // `hallmark --version` loads no database driver, `hallmark keys` no web server: cli.ts imports each command when it runs.
  splitting: true,
});
const manifest: CliBundleManifest = {
  builtFrom: started,
  // The lockfile stands for the packages outside the workspace, which the bundle imports by path.
  inputs: [...inputs.map((input) => relative(workspaceRoot, input)), 'pnpm-lock.yaml'],
};
await writeFile(join(building, manifestFile), `${JSON.stringify(manifest)}\n`);
await rm(folder, { recursive: true, force: true });
await rename(building, folder);
