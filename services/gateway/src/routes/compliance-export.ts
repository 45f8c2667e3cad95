import { Readable } from 'node:stream';
import type { ExportedEvent, ExportPage } from '@hallmark/contracts';

/**
 * Writes an export as its pages arrive, so memory stays flat however long the history is.
 * JSON: one document, `events` last. CSV: a header, a `checkpoint` row, then one row per event
 * (docs/COMPLIANCE.md, "Exports").
 */
export function exportStream(
  first: ExportPage,
  nextPage: (fromLeafIndex: number) => Promise<ExportPage>,
  format: 'json' | 'csv',
  exportedAt: string,
): Readable {
  async function* pages(): AsyncGenerator<ExportPage> {
    let page = first;
    yield page;
    while (page.nextLeafIndex !== null) {
      page = await nextPage(page.nextLeafIndex);
      yield page;
    }
  }
  return Readable.from(format === 'json' ? jsonChunks(first, pages(), exportedAt) : csvChunks(first, pages()));
}

async function* jsonChunks(first: ExportPage, pages: AsyncGenerator<ExportPage>, exportedAt: string): AsyncGenerator<string> {
  const head = {
    format: 'hallmark.compliance-export/1',
    assetId: first.assetId,
    owner: first.owner,
    exportedAt,
    treeSize: first.treeSize,
    rootHash: first.rootHash,
    algorithm: 'RFC9162_SHA256',
    checkpoint: first.checkpoint,
  };
  yield `${JSON.stringify(head).slice(0, -1)},"events":[`;
  let separator = '\n';
  for await (const page of pages) {
    const chunk = page.events.map((event) => JSON.stringify(event)).join(',\n');
    if (chunk) {
      yield separator + chunk;
      separator = ',\n';
    }
  }
  yield '\n]}\n';
}

const csvColumns = [
  'record',
  'leaf_index',
  'event_id',
  'sequence',
  'type',
  'occurred_at',
  'prev_hash',
  'hash',
  'leaf_hash',
  'audit_path',
  'data',
  'asset_id',
  'tree_size',
  'root_hash',
  'checkpoint',
] as const;

/** RFC 4180 field: quoted when it holds a comma, quote or line break. */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvRow = (values: Partial<Record<(typeof csvColumns)[number], string | number | null>>) =>
  `${csvColumns.map((column) => csvField(values[column] ?? null)).join(',')}\r\n`;

function eventRow(event: ExportedEvent): string {
  return csvRow({
    record: 'event',
    leaf_index: event.leafIndex,
    event_id: event.eventId,
    sequence: event.sequence,
    type: event.type,
    occurred_at: event.occurredAt,
    prev_hash: event.prevHash,
    hash: event.hash,
    leaf_hash: event.leafHash,
    audit_path: event.auditPath.join(' '),
    data: JSON.stringify(event.data),
  });
}

async function* csvChunks(first: ExportPage, pages: AsyncGenerator<ExportPage>): AsyncGenerator<string> {
  yield `${csvColumns.join(',')}\r\n`;
  yield csvRow({
    record: 'checkpoint',
    asset_id: first.assetId,
    tree_size: first.treeSize,
    root_hash: first.rootHash,
    checkpoint: first.checkpoint?.note ?? null,
  });
  for await (const page of pages) yield page.events.map(eventRow).join('');
}
