// Puts `hallmark` on the PATH after the README's install (run by the root's `postinstall`): a
// symbolic link to this checkout's apps/hallmark/bin/hallmark.js in the first folder on PATH where a
// user's commands go and that this user may write: ~/.local/bin, ~/bin, $PNPM_HOME, /usr/local/bin
// (in PATH's order). It never replaces a `hallmark` it did not make: a link it made (from this or
// another checkout, even one since deleted) is pointed here, anything else is left and named.
// HALLMARK_LINK_COMMAND=0 skips it. Run as root, it links only a checkout root owns: a command
// every user may run must not run files another user can change. Plain JavaScript: it runs before
// anything is built.
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ownTarget = /[\\/]apps[\\/]hallmark[\\/]bin[\\/]hallmark\.js$/;

/** The folders a user's commands go in, as they stand on PATH (first wins). */
export function candidateFolders(env) {
  const home = env.HOME;
  const wanted = new Set(
    [home && join(home, '.local', 'bin'), home && join(home, 'bin'), env.PNPM_HOME, '/usr/local/bin']
      .filter(Boolean)
      .map((folder) => resolve(folder)),
  );
  const onPath = (env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => resolve(folder));
  return [...new Set(onPath.filter((folder) => wanted.has(folder)))];
}

function writable(folder) {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** What stands at `path`: nothing, a link this script made (to any checkout), or something else. */
function occupant(path) {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink() && ownTarget.test(readlinkSync(path))) return 'ours';
    return 'foreign';
  } catch {
    return 'none';
  }
}

/** The user owning the file and every folder above it that is not root's: the first one that is not root's, else 0. */
function ownerOf(path) {
  for (let at = path; ; at = dirname(at)) {
    const owner = statSync(at).uid;
    if (owner !== 0) return owner;
    if (dirname(at) === at) return 0;
  }
}

/**
 * Links `hallmark` to `target` in the first writable candidate folder. Returns what it did, as a
 * line for the install's output.
 */
export function linkCommand(target, env = process.env, uid = process.getuid?.()) {
  if (env.HALLMARK_LINK_COMMAND === '0') return 'hallmark: not linked onto the PATH (HALLMARK_LINK_COMMAND=0)';
  if (uid === 0 && ownerOf(target) !== 0) {
    return `hallmark: not linked onto the PATH: installing as root in a checkout another user owns (run ${target})`;
  }
  const folders = candidateFolders(env).filter(writable);
  for (const folder of folders) {
    const path = join(folder, 'hallmark');
    const there = occupant(path);
    if (there === 'foreign') return `hallmark: ${path} exists and is not ours; left alone (run ${target})`;
    if (there === 'ours') {
      if (readlinkSync(path) === target) return `hallmark: on the PATH at ${path}`;
      unlinkSync(path);
    }
    symlinkSync(target, path);
    return `hallmark: linked ${path} -> ${target} (remove that link to undo)`;
  }
  return `hallmark: no folder on the PATH to link it in (~/.local/bin, ~/bin, $PNPM_HOME or /usr/local/bin, writable); run ${target}, or npx pnpm hallmark`;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL('../bin/hallmark.js', import.meta.url));
  try {
    console.log(linkCommand(target));
  } catch (error) {
    // Never fails the install: the command stays reachable as `pnpm hallmark`.
    console.log(`hallmark: not linked onto the PATH (${error instanceof Error ? error.message : String(error)})`);
  }
}
