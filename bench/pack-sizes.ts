// What a generated code's first event takes in PostgreSQL by the size of the pack it goes in
// (issue #19, target 5; docs/ARCHITECTURE.md, "Packed first events"): events of the product's
// shape started through the event store's startStreamsWithRows, as code-service starts them, in
// statements of 1, 2, 4, 16 and 100 codes (a batch's chunk packs 100 at a time; single generates
// pack what group commit puts in one statement), and as rows of `events` for comparison. Bytes per
// event over `events`, `event_packs` and `packed_streams` (pg_total_relation_size: heap, indexes,
// TOAST), after minus before.
//
//   pnpm bench:packs                 (4,000 events per line)
//   BENCH_EVENTS=20000 pnpm bench:packs
import { randomUUID } from 'node:crypto';
import { createSqlEventStore } from '@hallmark/event-store';
import { connectTestDatabase } from '@hallmark/sql';
import { machineLine } from './support.ts';

const total = Number(process.env.BENCH_EVENTS ?? 4_000);
const hex = () => randomUUID().replaceAll('-', '');
const signature = '_4dIdEtQ-q7m-ANw_9VSfS3Rs4JnJG5HpQUyiHvRba0x5Y9PlVS3Lgy5FZr8mG-bHVWll4FxZK7J7arq9vtyAw';

/** A `code.generated` event as code-service writes it: the code as issued, and its chain fields. */
function codeEvent(index: number) {
  const assetId = `code_${hex()}`;
  const at = new Date().toISOString();
  return {
    streamId: `asset-${assetId}`,
    data: {
      url: `http://localhost:8080/01/09506000134352/21/B0-${index}?sig=${signature}`,
      gtin: '09506000134352',
      keyId: 'oDogdPM1s3E5nHqvozk6JTFLoxRUjOKFCPpEvJgO8JU',
      serial: `B0-${index}`,
      assetId,
      metadata: {},
      createdAt: at,
      expiresAt: null,
      signature,
    },
    metadata: {
      requestId: randomUUID(),
      provenance: {
        hash: hex() + hex(),
        assetId,
        prevHash: null,
        sequence: 1,
        accountId: 'acc_1666f06d4c641b97e235',
        occurredAt: at,
        environment: 'live',
      },
    },
  };
}

const database = await connectTestDatabase('bench_packs');
const { db } = database;
try {
  await db.query('CREATE TABLE started_rows (key text PRIMARY KEY)');
  const storedBytes = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          `SELECT (pg_total_relation_size('events') + pg_total_relation_size('event_packs')
                   + pg_total_relation_size('packed_streams'))::text AS n`,
        )
      )[0]?.n,
    );
  const lines: string[] = [];
  for (const [label, perStatement, packs] of [
    ['rows of `events`', 100, false],
    ['1 a statement (a row: a code alone is not packed)', 1, true],
    ['packs of 2', 2, true],
    ['packs of 4', 4, true],
    ['packs of 16', 16, true],
    ['packs of 100', 100, true],
  ] as const) {
    const store = await createSqlEventStore(db, { packFirstEvents: packs });
    const start = store.startStreamsWithRows?.bind(store);
    if (!start) throw new Error('the SQL event store starts streams with rows');
    const before = await storedBytes();
    for (let done = 0; done < total; done += perStatement) {
      const events = Array.from({ length: perStatement }, (_, i) => codeEvent(done + i));
      const keys = events.map(() => randomUUID());
      await start(
        events.map((event, i) => ({
          key: keys[i] as string,
          streamId: event.streamId,
          events: [{ type: 'code.generated', data: event.data, metadata: event.metadata }],
        })),
        { db, text: 'INSERT INTO started_rows (key) SELECT unnest($1::text[]) RETURNING key', params: [keys] },
      );
    }
    lines.push(`| ${label} | ${Math.round(((await storedBytes()) - before) / total).toLocaleString('en')} B |`);
  }
  process.stdout.write(
    [
      `A code's first event by its pack, ${machineLine()}, ${total.toLocaleString('en')} events a line`,
      '',
      '| written as | per event (events, event_packs, packed_streams: heap, indexes, TOAST) |',
      '|---|---|',
      ...lines,
      '',
    ].join('\n'),
  );
} finally {
  await database.drop();
}
