import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

const gzipped = promisify(gzip);

/**
 * A large answer that changes seldom (the OpenAPI document, the public key set), serialised once:
 * serialising it for every request held the event loop all tenants share (the key set at 5.9 MB:
 * another tenant's verifications went from 3 to 40 ms at p50 while two clients downloaded it).
 */
export interface SerialisedJson {
  json: Buffer;
  etag: string;
  /** The gzip of `json`, made once on first use, off the event loop (libuv's pool). */
  gzip(): Promise<Buffer>;
}

export function serialiseJson(value: unknown): SerialisedJson {
  const json = Buffer.from(JSON.stringify(value));
  let compressed: Promise<Buffer> | undefined;
  return {
    json,
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`,
    gzip: () => {
      compressed ??= gzipped(json);
      return compressed;
    },
  };
}

/** Answers `document` with its ETag (304 to an If-None-Match of it), gzip when the client takes it. */
export async function sendSerialisedJson(
  request: FastifyRequest,
  reply: FastifyReply,
  document: SerialisedJson,
  cacheControl: string,
): Promise<FastifyReply> {
  reply.header('cache-control', cacheControl).header('etag', document.etag).header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === document.etag) return reply.status(304).send();
  reply.type('application/json; charset=utf-8');
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? ''))
    return reply.header('content-encoding', 'gzip').send(await document.gzip());
  return reply.send(document.json);
}
