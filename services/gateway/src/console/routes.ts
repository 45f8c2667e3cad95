import { consoleFileRoute, consolePageRoute, HallmarkError } from '@hallmark/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { registerRoute } from '../route-registry.ts';
import { type ConsoleFile, defaultConsoleDirectory, loadConsoleFiles } from './console-files.ts';
import { unbuiltConsolePage } from './unbuilt-page.ts';

/**
 * The console's Content-Security-Policy: its own scripts, styles, images and API only; no inline
 * script or style, nothing from another origin, no framing, no plugins.
 */
export const consoleContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const aYear = 'public, max-age=31536000, immutable';

/** A path that names a file (a dot in its last segment) or lies under assets/: never answered with the page. */
function looksLikeFile(path: string): boolean {
  return path.startsWith('assets/') || (path.split('/').pop() ?? '').includes('.');
}

export interface ConsoleRouteOptions {
  /** The console's build; apps/console/dist by default. */
  directory?: string;
}

/**
 * Serves the console's build at /console: hashed assets cached for a year, the page never without
 * revalidation, every other path below /console answered with the page (the app routes it), and
 * a page saying how to build the console where it is not built.
 */
export function registerConsoleRoutes(app: FastifyInstance, options: ConsoleRouteOptions = {}): void {
  const directory = options.directory ?? defaultConsoleDirectory;
  let files = loadConsoleFiles(directory);
  // A console built after the gateway started is picked up by the next request.
  const currentFiles = () => (files ??= loadConsoleFiles(directory));

  const send = (reply: FastifyReply, file: ConsoleFile) =>
    reply
      .header('cache-control', file.immutable ? aYear : 'no-cache')
      .type(file.contentType)
      .send(file.body);

  // Every answer below /console carries the console's headers (docs/CONSOLE.md): its files and page,
  // the page saying how to build it, and any refusal, those of paths no console route takes included.
  app.addHook('onRequest', (request, reply, done) => {
    const url = request.url;
    if (url === '/console' || url.startsWith('/console/') || url.startsWith('/console?')) {
      reply
        .header('content-security-policy', consoleContentSecurityPolicy)
        .header('referrer-policy', 'same-origin')
        .header('x-frame-options', 'DENY');
    }
    done();
  });

  const answer = async (request: FastifyRequest, reply: FastifyReply, path: string) => {
    const built = currentFiles();
    const file = built?.get(path);
    if (file && path !== 'index.html') return send(reply, file);
    if (path !== '' && looksLikeFile(path) && path !== 'index.html') {
      throw new HallmarkError('NOT_FOUND', `The console has no file ${request.url.split('?')[0]}.`);
    }
    const page = built?.get('index.html');
    if (page) return send(reply, page);
    return reply.status(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(unbuiltConsolePage);
  };

  registerRoute(app, consolePageRoute, (request, reply) => answer(request, reply, ''));
  registerRoute(app, consoleFileRoute, (request, reply) => {
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    return answer(request, reply, rest.replace(/^\/+/, ''));
  });
}
