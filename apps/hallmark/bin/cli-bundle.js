// Whether the `hallmark` command can run its bundle (scripts/build-cli.ts, made by the install):
// only while every source file it was made from is older than the build, so an edit, a pull or a
// checkout of another branch runs the sources through tsx until the next install or `pnpm build`.
// Plain JavaScript: it runs before anything is transpiled.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const manifestFile = 'cli.inputs.json';

/** @typedef {{ builtFrom: number; inputs: string[] }} CliBundleManifest */

const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** Where the bundle lives: a cache folder of the app's node_modules, which git and the build leave alone. */
export function cliBundleFolder() {
  return fileURLToPath(new URL('../node_modules/.cache/hallmark-cli', import.meta.url));
}

/**
 * The bundle's URL when it is fresh: its manifest reads, and every input exists and was last
 * changed before the build started. Else undefined (no bundle, a stale one, an unreadable manifest).
 * @param {string} [folder]
 * @param {string} [root] the folder the manifest's inputs are relative to
 * @returns {string | undefined}
 */
export function freshCliBundle(folder = cliBundleFolder(), root = workspaceRoot) {
  try {
    /** @type {CliBundleManifest} */
    const manifest = JSON.parse(readFileSync(join(folder, manifestFile), 'utf8'));
    if (typeof manifest.builtFrom !== 'number' || !Array.isArray(manifest.inputs) || manifest.inputs.length === 0)
      return undefined;
    for (const input of manifest.inputs) {
      if (statSync(join(root, input)).mtimeMs >= manifest.builtFrom) return undefined;
    }
    const bundle = join(folder, 'cli.mjs');
    statSync(bundle);
    return pathToFileURL(bundle).href;
  } catch {
    return undefined;
  }
}
