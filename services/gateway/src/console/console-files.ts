import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built file of the console, held in memory with the headers it is served with. */
export interface ConsoleFile {
  body: Buffer;
  contentType: string;
  /** Vite's hashed assets (assets/name-hash.js) never change under their name: cached for a year. */
  immutable: boolean;
}

/** The console's build (apps/console, `vite build`), from src/ and from the compiled dist/ alike. */
export const defaultConsoleDirectory = fileURLToPath(new URL('../../../../apps/console/dist/', import.meta.url));

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeOf(path: string): string {
  return contentTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Every file of a console build, keyed by its path below the build folder (`index.html`,
 * `assets/index-1a2b3c.js`); null when there is no build (no index.html). Read once: the gateway
 * serves from memory, and only what the build holds can be served (no path reaches the disk).
 */
export function loadConsoleFiles(directory: string): Map<string, ConsoleFile> | null {
  if (!existsSync(join(directory, 'index.html'))) return null;
  const files = new Map<string, ConsoleFile>();
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    const path = relative(directory, join(entry.parentPath, entry.name)).split(sep).join('/');
    files.set(path, {
      body: readFileSync(join(directory, path)),
      contentType: contentTypeOf(path),
      immutable: path.startsWith('assets/'),
    });
  }
  return files;
}
