// Builds the console (apps/console/dist) with Vite. Run by the root's `postinstall` (so the README's
// `pnpm install && pnpm start` serves it on a fresh clone) and by `pnpm build`; with `--if-stale`,
// by `pnpm start` and the browser tests, which build it only when a source is newer than the build
// (a `git pull` without an install served, and tested, the console as it was before). Where Vite is
// not installed (a production install without dev dependencies), an existing build is kept; the
// gateway answers /console with how to build it if there is none.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const consoleDirectory = fileURLToPath(new URL('..', import.meta.url));
const vite = join(consoleDirectory, 'node_modules', 'vite', 'bin', 'vite.js');
const builtPage = join(consoleDirectory, 'dist', 'index.html');

/** The newest modification time of the files a build is made of, in ms. */
function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const name of ['src', 'public', 'index.html', 'vite.config.ts', 'package.json']) {
    if (existsSync(join(consoleDirectory, name))) visit(join(consoleDirectory, name));
  }
  return newest;
}

if (process.argv.includes('--if-stale') && existsSync(builtPage) && statSync(builtPage).mtimeMs >= newestSource()) {
  process.exit(0);
}

if (!existsSync(vite)) {
  const built = existsSync(join(consoleDirectory, 'dist', 'index.html'));
  console.log(
    built
      ? 'console: Vite is not installed; keeping the existing build in apps/console/dist'
      : 'console: Vite is not installed, so the console is not built; the gateway answers /console with how to build it',
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: consoleDirectory, stdio: 'inherit' });
if (result.status === 0) console.log('console: built into apps/console/dist');
process.exit(result.status ?? 1);
