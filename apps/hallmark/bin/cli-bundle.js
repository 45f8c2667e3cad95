// Whether the `hallmark` command can run its bundle (scripts/build-cli.ts, made by the install):
// only while the checkout is where the bundle was made and every file it was made from (the
// workspace sources it holds, the workspace's package.json files, the TypeScript settings and the
// lockfile) has the size and modification time it had then. An edit, a pull, a checkout of another
// branch or a copy that keeps older times runs the sources through tsx until the next install or
// `pnpm build`. Plain JavaScript: it runs before anything is transpiled.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The file naming the current build, in the bundle folder. */
export const manifestFile = 'current.json';

/**
 * @typedef {{ build: string; root: string; inputs: Array<[path: string, mtimeMs: number, size: number]> }} CliBundleManifest
 */

const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** Where the bundles live: a cache folder of the app's node_modules, which git and the build leave alone. */
export function cliBundleFolder() {
  return fileURLToPath(new URL('../node_modules/.cache/hallmark-cli', import.meta.url));
}

/**
 * The current bundle's URL when it is fresh (see above), else undefined: no bundle, a stale one,
 * a manifest it cannot read.
 * @param {string} [folder]
 * @param {string} [root] the workspace root the manifest's inputs are relative to
 * @returns {string | undefined}
 */
export function freshCliBundle(folder = cliBundleFolder(), root = workspaceRoot) {
  try {
    /** @type {CliBundleManifest} */
    const manifest = JSON.parse(readFileSync(join(folder, manifestFile), 'utf8'));
    if (manifest.root !== root || typeof manifest.build !== 'string' || !/^[\w.-]+$/.test(manifest.build)) return undefined;
    if (!Array.isArray(manifest.inputs) || manifest.inputs.length === 0) return undefined;
    for (const [path, mtimeMs, size] of manifest.inputs) {
      const stats = statSync(join(root, path));
      if (stats.mtimeMs !== mtimeMs || stats.size !== size) return undefined;
    }
    const bundle = join(folder, 'builds', manifest.build, 'cli.mjs');
    statSync(bundle);
    return pathToFileURL(bundle).href;
  } catch {
    return undefined;
  }
}
