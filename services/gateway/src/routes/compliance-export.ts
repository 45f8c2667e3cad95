import { Readable } from 'node:stream';
import type { ExportedEvent, ExportPage } from '@hallmark/contracts';
import { formatDigitalLink } from '@hallmark/gs1';

/**
 * Writes an export as its pages arrive, so memory stays flat however long the history is.
 * JSON: one document, `events` last. CSV: a header, a `checkpoint` row, then one row per event.
 * EPCIS: an EPCIS 2.0 JSON-LD document (docs/COMPLIANCE.md, "Exports").
 */
export function exportStream(
  first: ExportPage,
  nextPage: (fromLeafIndex: number) => Promise<ExportPage>,
  format: 'json' | 'csv' | 'epcis',
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
  const chunks =
    format === 'json'
      ? jsonChunks(first, pages(), exportedAt)
      : format === 'csv'
        ? csvChunks(first, pages())
        : epcisChunks(first, pages(), exportedAt);
  // In bytes, not objects: an object-mode stream reads 16 chunks (pages of up to 600 KB) ahead of a
  // client that reads slowly; this one reads a page past its 16 KB mark at most.
  return Readable.from(chunks, { objectMode: false });
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

/**
 * An event's data as JSON for a CSV cell, with every `;` written `\u003b`: the same JSON once parsed
 * (a `;` is only ever inside a string), and no `;` where a spreadsheet whose list separator is `;`
 * would start a cell and run what follows as a formula. The data holds outsiders' words (a report's
 * reason in `code.report-dismissed`), and spreadsheetSafe's `'` would change them.
 */
const inertJson = (data: unknown): string => JSON.stringify(data).replaceAll(';', '\\u003b');

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
    data: inertJson(event.data),
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

/** Where Hallmark's EPCIS extension fields are defined (prefix `hallmark:` in the document's context). */
export const epcisNamespace = 'https://ns.hallmark.dev/epcis/';

/** CBV 2.0 business steps for the provenance event types. */
const bizSteps: Record<string, string> = {
  'code.generated': 'commissioning',
  registered: 'commissioning',
  cataloged: 'inspecting',
  photographed: 'inspecting',
  authenticated: 'inspecting',
  condition_report: 'inspecting',
  exhibited: 'storing',
  listed: 'staging_outbound',
  withdrawn: 'holding',
  transfer_initiated: 'consigning',
  transfer_locked: 'holding',
  transfer_expired: 'holding',
  transfer_cancelled: 'holding',
  sold: 'retail_selling',
  transferred: 'accepting',
};

/**
 * The item's EPC as a GS1 Digital Link URI (GTIN + serial) on GS1's own resolver, from the asset's
 * first event, the serial percent-encoded as every link the product writes (formatDigitalLink), so
 * one item has one spelling across exports and links.
 */
function epcOf(first: ExportedEvent | undefined): string | undefined {
  const data = (first?.data ?? {}) as { gtin?: unknown; serial?: unknown; serviceSerial?: unknown; link?: { gtin?: unknown } };
  const gtin = typeof data.gtin === 'string' ? data.gtin : typeof data.link?.gtin === 'string' ? data.link.gtin : undefined;
  const serial =
    typeof data.serial === 'string' ? data.serial : typeof data.serviceSerial === 'string' ? data.serviceSerial : undefined;
  return gtin && serial ? formatDigitalLink({ origin: 'https://id.gs1.org', gtin, serial }) : undefined;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function epcisEvent(event: ExportedEvent, epc: string | undefined) {
  return {
    type: 'ObjectEvent',
    eventTime: event.occurredAt,
    eventTimeZoneOffset: '+00:00',
    eventID: uuidPattern.test(event.eventId)
      ? `urn:uuid:${event.eventId}`
      : `urn:hallmark:event:${encodeURIComponent(event.eventId)}`,
    epcList: epc ? [epc] : [],
    action: event.sequence === 1 ? 'ADD' : 'OBSERVE',
    bizStep: bizSteps[event.type] ?? 'other',
    'hallmark:eventType': event.type,
    'hallmark:sequence': event.sequence,
    'hallmark:prevHash': event.prevHash,
    'hallmark:hash': event.hash,
    'hallmark:leafIndex': event.leafIndex,
    'hallmark:leafHash': event.leafHash,
    'hallmark:auditPath': event.auditPath,
    'hallmark:data': event.data,
  };
}

/**
 * EPCIS 2.0 JSON-LD (an EPCISDocument of ObjectEvents) for supply-chain auditors: one event per
 * provenance event, with its hashes and inclusion proof as `hallmark:` extension fields, and the
 * tree size, root and signed checkpoint on the document.
 */
async function* epcisChunks(first: ExportPage, pages: AsyncGenerator<ExportPage>, exportedAt: string): AsyncGenerator<string> {
  const epc = epcOf(first.events[0]);
  const head = {
    // `hallmark:data` holds what the brand recorded (metadata, evidence), whose keys may begin with
    // `@`: as a JSON literal (JSON-LD 1.1) a processor keeps it as it is, where `@id: 5` inside it had
    // made the whole document fail and `@included` had added an event the list does not hold.
    '@context': [
      'https://ref.gs1.org/standards/epcis/epcis-context.jsonld',
      { hallmark: epcisNamespace, 'hallmark:data': { '@id': `${epcisNamespace}data`, '@type': '@json' } },
    ],
    type: 'EPCISDocument',
    schemaVersion: '2.0',
    creationDate: exportedAt,
    'hallmark:assetId': first.assetId,
    'hallmark:treeSize': first.treeSize,
    'hallmark:rootHash': first.rootHash,
    'hallmark:algorithm': 'RFC9162_SHA256',
    'hallmark:checkpoint': first.checkpoint,
    'hallmark:owner': first.owner,
  };
  yield `${JSON.stringify(head).slice(0, -1)},"epcisBody":{"eventList":[`;
  let separator = '\n';
  for await (const page of pages) {
    const chunk = page.events.map((event) => JSON.stringify(epcisEvent(event, epc))).join(',\n');
    if (chunk) {
      yield separator + chunk;
      separator = ',\n';
    }
  }
  yield '\n]}}\n';
}
