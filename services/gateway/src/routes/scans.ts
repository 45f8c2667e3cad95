import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  bulkBlockRoute,
  type CreateBlockBody,
  CreateBlockBody as CreateBlockBodySchema,
  type CsvRecord,
  CsvSyntaxError,
  createBlockRoute,
  createBlocksRpc,
  deleteBlockRoute,
  deleteBlockRpc,
  type ErrorCode,
  HallmarkError,
  type ListBlocksQuery,
  type ListScansQuery,
  listBlocksRoute,
  listBlocksRpc,
  listScansRoute,
  listScansRpc,
  maxScansPageSize,
  parseCsv,
  type RemovalByCreatorQuery,
  removeBlocksMadeByRoute,
  removeBlocksMadeByRpc,
  type ScanAggregatesQuery,
  type ScanCountriesQuery,
  type ScanList,
  type ScanView,
  scanAggregatesRoute,
  scanAggregatesRpc,
  scanCountriesRoute,
  scanCountriesRpc,
  spreadsheetSafe,
  type TopCodesQuery,
  topScannedCodesRoute,
  topScannedCodesRpc,
} from '@hallmark/contracts';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyLimitOf, type RestrictedKeyLimits } from '../auth/key-restrictions.ts';
import { principalOf, requireApiKey } from '../auth/request-auth.ts';
import { registerRoute } from '../route-registry.ts';
import type { ServiceCaller } from '../service-call.ts';
import { removeInTurns } from './removals-in-turns.ts';

// The scans API and the blocklist (docs/API.md, "Scans" and "Blocklist"); verify-service answers
// (services/verify-service/src/handlers/scans.ts and blocklist.ts).

const clientOf = (request: FastifyRequest) => ({ keyId: requireApiKey(request).keyId, address: request.ip });

/**
 * A CSV cell (RFC 4180). Text a spreadsheet would run as a formula (= + - @, tab, CR) gets a quote
 * before it, at the start and after every `;`: a spreadsheet whose list separator is `;` (Excel in
 * most European locales) splits the row there, quotes or not, and a serial `X;=1+1` (which GS1 AI
 * 82 allows, and anyone can send in a forged link of a brand's GTIN) became a formula cell.
 */
export function csvCell(value: string, text = true): string {
  const safe = text ? spreadsheetSafe(value) : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export const scanCsvHeader =
  'scanId,scannedAt,gtin,serial,batch,verdict,riskIndicators,scanNumber,latitude,longitude,country,reported,scannedBy\r\n';

function scanCsvRow(scan: ScanView): string {
  return `${[
    scan.scanId,
    scan.scannedAt,
    csvCell(scan.gtin),
    csvCell(scan.serial),
    csvCell(scan.batch ?? ''),
    scan.verdict,
    scan.riskIndicators.join(';'),
    String(scan.scanNumber),
    scan.location ? String(scan.location.latitude) : '',
    scan.location ? String(scan.location.longitude) : '',
    csvCell(scan.country ?? ''),
    String(scan.reported),
    scan.scannedBy,
  ].join(',')}\r\n`;
}

const wantsCsv = (request: FastifyRequest, query: ListScansQuery) =>
  query.format === 'csv' || (query.format === undefined && prefersCsv(request.headers.accept ?? ''));

/**
 * Whether an Accept header asks for CSV: `text/csv` named with a quality above 0 and no lower than
 * the one JSON gets (`text/csv;q=0` says CSV is not acceptable: JSON, since 2026-12-05). JSON's is
 * that of the most specific range that covers it, `application/json`, `application/*` or `*\/*`
 * (RFC 9110, 12.5.1): `text/csv;q=0.5, *\/*` prefers JSON, which it had been answered CSV.
 */
export function prefersCsv(accept: string): boolean {
  const csv = acceptQuality(accept, 'text/csv', { named: true });
  return csv > 0 && csv >= acceptQuality(accept, 'application/json');
}

/**
 * The quality an Accept header gives a media type: that of the most specific range covering it (the
 * type itself, its `type/*`, then `*\/*`; with `named`, the type itself only), the highest of equally
 * specific ones; its `q`, 1 without one; 0 when none covers it.
 */
function acceptQuality(accept: string, type: string, { named = false }: { named?: boolean } = {}): number {
  const ranges = named ? [type] : [type, `${type.split('/')[0]}/*`, '*/*'];
  let best = { specificity: -1, quality: 0 };
  for (const range of accept.split(',')) {
    const [name = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const specificity = ranges.length - ranges.indexOf(name);
    if (specificity > ranges.length || specificity < best.specificity) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(value)) continue;
    best = { specificity, quality: specificity > best.specificity ? value : Math.max(best.quality, value) };
  }
  return best.quality;
}

/**
 * Every matching scan (after `cursor`, when one is given) as CSV: keyset pages of 1,000 asked of verify-service one after another (the
 * next asked for while the current one is written), each written out as it comes, so the gateway
 * holds two pages at most whatever the export's size; the stream's backpressure paces the asking.
 */
async function scanCsv(services: ServiceCaller, request: FastifyRequest, query: ListScansQuery): Promise<Readable> {
  const { cursor, limit: _limit, format: _format, ...filters } = query;
  const principal = principalOf(request);
  const page = (cursor: string | undefined) =>
    services.call(
      listScansRpc,
      { principal, query: { ...filters, limit: maxScansPageSize, ...(cursor ? { cursor } : {}) } },
      request.id,
    );
  // The first page is awaited before anything is sent, so a refused query (a bad cursor among them)
  // still answers its error envelope. A cursor from a JSON page exports the scans after it (it was
  // ignored: the whole export came again).
  const first = await page(cursor);
  // HEAD: the GET's status and headers, and no export behind them. Node drops a HEAD's body as it is
  // written, so nothing paced the pages: each HEAD ran the whole export at the database's speed.
  if (request.method === 'HEAD') return Readable.from([]);
  async function* lines() {
    yield scanCsvHeader;
    let next: ReturnType<typeof page> | undefined = Promise.resolve(first);
    while (next) {
      const current: ScanList = await next;
      next = current.pagination.nextCursor ? page(current.pagination.nextCursor) : undefined;
      next?.catch(() => {});
      yield current.scans.map(scanCsvRow).join('');
    }
  }
  return Readable.from(lines(), { objectMode: false });
}

/**
 * The name a bulk file's chunk is recorded under when the file came with an Idempotency-Key: the API
 * key (whose key space the Idempotency-Key is), the Idempotency-Key, the chunk's first line and its
 * lines, hashed. A retry of a file answered 5xx after some chunks were stored sends those chunks
 * under the same names, and verify-service answers them as they were recorded (migration 0013); a
 * chunk of other lines under the same Idempotency-Key is another name.
 */
function bulkChunkKeyOf(apiKeyId: string, idempotencyKey: string, start: number, blocks: readonly CreateBlockBody[]): string {
  return createHash('sha256')
    .update(JSON.stringify([apiKeyId, idempotencyKey, start, blocks]))
    .digest('hex');
}

/** The bulk blocklist's records; a CSV that cannot be read is a VALIDATION_ERROR naming the line. */
function csvRecordsOf(text: string): CsvRecord[] {
  try {
    return [...parseCsv(text)];
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    throw new HallmarkError('VALIDATION_ERROR', `The CSV cannot be read: ${error.message}.`, { line: error.line });
  }
}

const bulkColumns = ['gtin', 'serial', 'serialFrom', 'serialTo', 'kind', 'reason'] as const;
const maxBulkLines = 10_000;
const bulkChunk = 500;

type BulkResult = { line: number; block: unknown } | { line: number; error: { code: string; message: string } };

/** GET /scans (JSON or CSV), the aggregates, POST/GET /blocklist, POST /blocklist/bulk, DELETE /blocklist/{blockId}. */
export function registerScanRoutes(
  app: FastifyInstance,
  deps: { services: ServiceCaller; restrictedKeyLimits: RestrictedKeyLimits },
): void {
  const { services, restrictedKeyLimits } = deps;
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: bulkBlockRoute.bodyLimit }, (_request, body, done) => {
    done(null, body);
  });

  registerRoute(app, listScansRoute, async (request, reply) => {
    const query = request.query as ListScansQuery;
    if (!wantsCsv(request, query)) return services.call(listScansRpc, { principal: principalOf(request), query }, request.id);
    const body = await scanCsv(services, request, query);
    reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="scans.csv"')
      .header('cache-control', 'private, no-store');
    return reply.send(body);
  });
  registerRoute(app, scanAggregatesRoute, async (request) =>
    services.call(
      scanAggregatesRpc,
      { principal: principalOf(request), query: request.query as ScanAggregatesQuery },
      request.id,
    ),
  );
  registerRoute(app, topScannedCodesRoute, async (request) =>
    services.call(topScannedCodesRpc, { principal: principalOf(request), query: request.query as TopCodesQuery }, request.id),
  );
  registerRoute(app, scanCountriesRoute, async (request) =>
    services.call(scanCountriesRpc, { principal: principalOf(request), query: request.query as ScanCountriesQuery }, request.id),
  );

  registerRoute(app, createBlockRoute, async (request, reply) => {
    const { results } = await services.call(
      createBlocksRpc,
      {
        principal: principalOf(request),
        client: clientOf(request),
        blocks: [request.body as CreateBlockBody],
        ...keyLimitOf(requireApiKey(request), restrictedKeyLimits.activeBlocks),
      },
      request.id,
    );
    const [result] = results;
    if (!result) throw new Error('no result for the block');
    if ('error' in result) throw new HallmarkError(result.error.code as ErrorCode, result.error.message, result.error.details);
    reply.status(201);
    return result.block;
  });

  registerRoute(app, bulkBlockRoute, async (request) => {
    if (!/^text\/csv\b/i.test(request.headers['content-type'] ?? '') || typeof request.body !== 'string') {
      throw new HallmarkError('UNSUPPORTED_MEDIA_TYPE', 'Send the blocklist as the body, with Content-Type text/csv.');
    }
    const [header, ...lines] = csvRecordsOf(request.body);
    const names = (header?.fields ?? []).map((name) => name.trim());
    const unknown = names.filter((name) => !(bulkColumns as readonly string[]).includes(name));
    // A column named twice would let its second value silently replace the first on every line.
    const repeated = [...new Set(names.filter((name, column) => names.indexOf(name) !== column))];
    if (!names.includes('gtin') || !names.includes('kind') || unknown.length > 0 || repeated.length > 0) {
      throw new HallmarkError(
        'VALIDATION_ERROR',
        `The first line must name the columns, each once, of ${bulkColumns.join(', ')}; gtin and kind are required.`,
        {
          ...(unknown.length > 0 ? { unknownColumns: unknown } : {}),
          ...(repeated.length > 0 ? { repeatedColumns: repeated } : {}),
        },
      );
    }
    if (lines.length === 0 || lines.length > maxBulkLines) {
      throw new HallmarkError('VALIDATION_ERROR', `Send 1 to ${maxBulkLines} lines after the header.`, { lines: lines.length });
    }
    const results: BulkResult[] = [];
    const valid: { line: number; body: CreateBlockBody }[] = [];
    // Each result names the line its record starts on (the header is line 1), blank lines counted.
    lines.forEach(({ fields, line }) => {
      const body: Record<string, string> = {};
      names.forEach((name, column) => {
        const value = fields[column]?.trim() ?? '';
        if (value !== '') body[name] = value;
      });
      if (Value.Check(CreateBlockBodySchema, body)) valid.push({ line, body: body as CreateBlockBody });
      else {
        const first = [...Value.Errors(CreateBlockBodySchema, body)][0];
        results.push({
          line,
          error: { code: 'VALIDATION_ERROR', message: `${first?.path || 'line'}: ${first?.message ?? 'invalid'}` },
        });
      }
    });
    const idempotencyKey = request.headers['idempotency-key'];
    for (let start = 0; start < valid.length; start += bulkChunk) {
      const chunk = valid.slice(start, start + bulkChunk);
      const blocks = chunk.map(({ body }) => body);
      const answer = await services.call(
        createBlocksRpc,
        {
          principal: principalOf(request),
          client: clientOf(request),
          blocks,
          ...keyLimitOf(requireApiKey(request), restrictedKeyLimits.activeBlocks),
          ...(typeof idempotencyKey === 'string'
            ? { chunkKey: bulkChunkKeyOf(requireApiKey(request).keyId, idempotencyKey, start, blocks) }
            : {}),
        },
        request.id,
      );
      answer.results.forEach((result, index) => {
        const line = (chunk[index] as { line: number }).line;
        results.push(
          'block' in result
            ? { line, block: result.block }
            : { line, error: { code: result.error.code, message: result.error.message } },
        );
      });
    }
    return { results: results.sort((a, b) => a.line - b.line) };
  });

  registerRoute(app, listBlocksRoute, async (request) =>
    services.call(listBlocksRpc, { principal: principalOf(request), query: request.query as ListBlocksQuery }, request.id),
  );
  registerRoute(app, deleteBlockRoute, async (request) =>
    services.call(
      deleteBlockRpc,
      { principal: principalOf(request), client: clientOf(request), blockId: (request.params as { blockId: string }).blockId },
      request.id,
    ),
  );
  registerRoute(app, removeBlocksMadeByRoute, async (request) =>
    removeInTurns(() =>
      services.call(
        removeBlocksMadeByRpc,
        {
          principal: principalOf(request),
          client: clientOf(request),
          createdBy: (request.query as RemovalByCreatorQuery).createdBy,
        },
        request.id,
      ),
    ),
  );
}
