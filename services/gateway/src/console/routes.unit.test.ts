import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { consoleContentSecurityPolicy, registerConsoleRoutes } from './routes.ts';

let app: FastifyInstance | undefined;
let directory: string | undefined;

afterEach(async () => {
  await app?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

async function serve(): Promise<FastifyInstance> {
  directory = mkdtempSync(join(tmpdir(), 'console-build-'));
  app = Fastify();
  registerConsoleRoutes(app, { directory });
  await app.ready();
  return app;
}

function build(into: string): void {
  mkdirSync(join(into, 'assets'), { recursive: true });
  writeFileSync(
    join(into, 'index.html'),
    '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1a2b.js"></script>',
  );
  writeFileSync(join(into, 'assets', 'app-1a2b.js'), 'console.log(1)');
  writeFileSync(join(into, 'assets', 'app-1a2b.css'), 'body{}');
  writeFileSync(join(into, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
}

describe('the console at /console', () => {
  it('says how to build it where it is not built (503, never a 500), then serves a build made later', async () => {
    const server = await serve();
    const unbuilt = await server.inject('/console');
    expect(unbuilt.statusCode).toBe(503);
    expect(unbuilt.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(unbuilt.body).toContain('--filter @hallmark/console build');
    expect(unbuilt.headers['content-security-policy']).toBe(consoleContentSecurityPolicy);
    expect(unbuilt.headers['x-frame-options']).toBe('DENY');
    expect(unbuilt.headers['referrer-policy']).toBe('same-origin');
    expect((await server.inject('/console/codes')).statusCode).toBe(503);
    expect((await server.inject('/console/assets/app-1a2b.js')).statusCode).toBe(404);

    build(directory!);
    const page = await server.inject('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>console</title>');
  });

  it('serves each file with its type: hashed assets cached for a year, the page revalidated, deep links answered with the page', async () => {
    const server = await serve();
    build(directory!);
    const script = await server.inject('/console/assets/app-1a2b.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await server.inject('/console/assets/app-1a2b.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    const icon = await server.inject('/console/favicon.svg');
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('no-cache');

    for (const path of ['/console', '/console/', '/console/keys', '/console/codes/0f3c9a', '/console/index.html']) {
      const page = await server.inject(path);
      expect(page.statusCode, path).toBe(200);
      expect(page.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control'], path).toBe('no-cache');
      expect(page.headers['content-security-policy'], path).toBe(consoleContentSecurityPolicy);
      expect(page.headers['x-frame-options'], path).toBe('DENY');
    }
    // A missing file is a 404, never the page read as a script; no path reaches outside the build.
    for (const path of [
      '/console/assets/other-9z9z.js',
      '/console/logo.png',
      '/console/../package.json',
      '/console/%2e%2e/x.js',
      '/console/..%2f..%2fpackage.json',
      '/console/favicon.ico',
    ]) {
      const missing = await server.inject(path);
      expect(missing.statusCode, path).toBe(404);
      // (Resolved by the client, as a URL, to /package.json and /x.js, which are not below /console.)
      if (path === '/console/../package.json' || path === '/console/%2e%2e/x.js') continue;
      // With the headers of every answer below /console (docs/CONSOLE.md; a review of 2026-12-07
      // found the 404s without them).
      expect(missing.headers['content-security-policy'], path).toBe(consoleContentSecurityPolicy);
      expect(missing.headers['x-frame-options'], path).toBe('DENY');
      expect(missing.headers['referrer-policy'], path).toBe('same-origin');
    }
  });
});
