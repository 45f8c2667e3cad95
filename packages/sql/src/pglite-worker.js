// PGlite in a worker thread (createPgliteDatabase with `thread: 'worker'`, pglite-worker-client.ts).
// PostgreSQL compiled to WebAssembly runs synchronously on whichever thread calls it: here, so the
// calling process's event loop only posts statements and receives rows.
//
// Plain JavaScript because Node starts a worker from a file it can run as it is: the product runs
// its TypeScript through tsx's loader, which a worker thread does not inherit, and the build copies
// this file beside the compiled pglite-database.js (allowJs), so one URL finds it from src/ and dist/.
//
// Messages in (each with an `id`, answered once with `{ id, rows, json? }`, `{ id, tx }`, `{ id }` or `{ id, error }`;
// `json`: the columns of `rows` that are json or jsonb, as their text, for the caller to parse):
//   { kind: 'query', text, params, tx? }   one statement, in transaction `tx` when given
//   { kind: 'exec', sql, tx? }             a script without parameters
//   { kind: 'begin' }                      opens a transaction; answered with its `tx` number once BEGIN ran
//   { kind: 'script', statements }         statements ({ text, params, expectRows? }) in one transaction, in this
//                                          one message; answered `{ outcome }`: committed with each one's
//                                          `{ rows, json? }`, or rolled back at the first `expectRows`
//                                          statement that returned none
//   { kind: 'end', tx, commit }            commits (or rolls back) that transaction; answered once done
//   { kind: 'listen', channel } / { kind: 'unlisten', channel }
//   { kind: 'close' }
// Messages out without an id: { kind: 'notify', channel, payload }.
// PGlite has one connection and runs one unit of work at a time: a statement, a script or a
// transaction (from `begin` to its `end`; the statements in it run as they come). Units wait in two
// lines (`waiting`, below): statements and transactions, which requests wait for, ahead of scripts,
// which carry a batch's chunks and the projections' pages.
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const { dataDir, startParams } = workerData;
if (dataDir) await mkdir(dataDir, { recursive: true });
const db = dataDir ? await PGlite.create(dataDir, { startParams }) : await PGlite.create({ startParams });

/** Open transactions by number: PGlite's transaction handle and how to end it. */
const transactions = new Map();
/** Channels listened to: the function that stops listening. */
const listening = new Map();
let nextTransaction = 1;
/** Thrown inside PGlite's transaction callback to make it roll back. */
const rollback = Symbol('rollback');

/** A PostgreSQL error as a plain object: structured cloning keeps only an Error's message and name. */
function plainError(error) {
  const fields = {};
  if (error && typeof error === 'object') {
    for (const [key, value] of Object.entries(error)) {
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
    }
  }
  return { message: error instanceof Error ? error.message : String(error), fields };
}

/**
 * For benchmarks: with HALLMARK_REPORT_PGLITE=<file> (`{pid}` in it is the process's id), the time
 * PGlite's thread spent on each statement (a script by its last statement, its lock's work with it),
 * summed since start, is written to that file every 5 s, most first. PGlite runs one unit at a
 * time (`waiting`, below), so a request's time is from its arrival, or the previous request's end if
 * later, to its own end; the time a transaction held open waits for its caller's next
 * statement is no statement's (bench:batch's figure of 2026-12-07 found it by its absence: 13.4 s
 * open for 9.8 s of work). Without the setting nothing is measured.
 */
const reportFile = process.env.HALLMARK_REPORT_PGLITE?.replaceAll('{pid}', String(process.pid));
/** Per statement (its first 120 characters): requests and milliseconds. */
const statementTimes = new Map();
let lastEnded = 0;
/** Writes the report; a file that cannot be written is left unwritten (a benchmark's aid never stops the database). */
function writeStatementReport() {
  try {
    writeReportFile();
  } catch {}
}
function writeReportFile() {
  const rows = [...statementTimes].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((sum, [, { ms }]) => sum + ms, 0);
  const lines = rows.map(
    ([statement, { count, ms }]) => `${ms.toFixed(0).padStart(8)} ms ${String(count).padStart(7)}× ${statement}`,
  );
  writeFileSync(reportFile, [`${total.toFixed(0).padStart(8)} ms in all`, ...lines, ''].join('\n'));
}
if (reportFile) setInterval(writeStatementReport, 5_000).unref();

/** The statement a message runs, for the report. */
function statementOf(message) {
  const text = message.kind === 'script' ? message.statements.at(-1)?.text : message.text;
  return `${message.kind}${message.tx ? ' (in a transaction)' : ''}: ${String(text ?? '')
    .replace(/\s+/g, ' ')
    .slice(0, 120)}`;
}

function timed(message, outcome) {
  const arrived = performance.now();
  return outcome.finally(() => {
    const ended = performance.now();
    const statement = statementOf(message);
    const times = statementTimes.get(statement) ?? { count: 0, ms: 0 };
    times.count += 1;
    times.ms += ended - Math.max(arrived, lastEnded);
    lastEnded = ended;
    statementTimes.set(statement, times);
  });
}

/**
 * json and jsonb columns leave this thread as their text, parsed by the calling thread
 * (pglite-worker-database.ts, `parsedRows`): a structured clone of a string is a copy, where parsing
 * here and cloning the objects cost this thread, the one that runs every statement, ~8 µs an event
 * of a page of the log (bench:batch measured it as the PGlite thread's bound). Parsed there as PGlite
 * parses them (JSON.parse).
 */
const jsonTypes = [114, 3802];
const jsonAsText = Object.fromEntries(jsonTypes.map((type) => [type, (text) => text]));

/**
 * A statement's rows, with the names of its json columns (left as text), if any. Of columns that
 * share a name, a row keeps the last one's value (PGlite's rows are objects), so that one decides.
 */
async function rowsOf(client, text, params) {
  const result = await client.query(text, params, { parsers: jsonAsText });
  const typeByName = new Map(result.fields.map((field) => [field.name, field.dataTypeID]));
  const json = [...typeByName].filter(([, type]) => jsonTypes.includes(type)).map(([name]) => name);
  return json.length > 0 ? { rows: result.rows, json } : { rows: result.rows };
}

function answer(id, outcome) {
  outcome.then(
    (result) => parentPort.postMessage({ id, ...result }),
    (error) => parentPort.postMessage({ id, error: plainError(error) }),
  );
}

function clientOf(tx) {
  if (tx === undefined) return db;
  const open = transactions.get(tx);
  if (!open) throw new Error(`transaction ${tx} is not open in the PGlite worker`);
  return open.client;
}

/**
 * Starts PGlite's transaction and holds it open (after BEGIN) until an `end` message settles it. A
 * unit (`inLine`): answered with its `tx` once BEGIN ran, ended once it is committed or rolled back.
 */
function begin() {
  const tx = nextTransaction++;
  const ending = {};
  const ended = new Promise((commit, abandon) => Object.assign(ending, { commit, abandon }));
  let settled;
  const answer = new Promise((opened, failed) => {
    let began = false;
    const done = db.transaction(async (client) => {
      began = true;
      transactions.set(tx, { client, ...ending, settled });
      opened({ tx });
      await ended;
    });
    // Committed, rolled back on request, or a COMMIT that failed: the answer to the `end` message.
    settled = done
      .then(
        () => ({}),
        (error) => {
          if (error === rollback) return {};
          throw error;
        },
      )
      .finally(() => transactions.delete(tx));
    settled.catch((error) => {
      if (!began) failed(error);
    });
  });
  return { answer, ended: settled };
}

/** A transaction of statements sent together: it holds PGlite for their work only, never across the caller's event loop. */
async function script(statements) {
  const rows = [];
  let emptyAt;
  try {
    await db.transaction(async (client) => {
      for (const [index, statement] of statements.entries()) {
        const result = await rowsOf(client, statement.text, statement.params);
        rows.push(result);
        if (statement.expectRows && result.rows.length === 0) {
          emptyAt = index;
          throw rollback;
        }
      }
    });
  } catch (error) {
    if (error !== rollback) throw error;
  }
  return { outcome: emptyAt === undefined ? { committed: true, rows } : { committed: false, emptyAt } };
}

async function end(tx, commit) {
  const open = transactions.get(tx);
  if (!open) throw new Error(`transaction ${tx} is not open in the PGlite worker`);
  if (commit) open.commit();
  else open.abandon(rollback);
  return open.settled;
}

async function listen(channel) {
  if (!listening.has(channel)) {
    const stop = await db.listen(channel, (payload) => parentPort.postMessage({ kind: 'notify', channel, payload }));
    listening.set(channel, stop);
  }
  return {};
}

async function unlisten(channel) {
  const stop = listening.get(channel);
  listening.delete(channel);
  await stop?.();
  return {};
}

/**
 * Units of work waiting for PGlite, in two lines, each in the order it came. `requests`: statements
 * and transactions, which callers wait for (a generate's insert, a sign-in's look-up). `scripts`:
 * statements sent together (`runInOneTrip`), which carry a batch's chunks of 500 codes (~50 ms of
 * this thread each) and the projections' pages. A script runs when no request waits, or after
 * `requestsAheadOfAScript` requests in a row have run while it waited: another tenant's single
 * generate waits for at most the one script running, not for every chunk of the batches in flight
 * (bench:neighbours, embedded: p50 ~640 ms to ~75 ms), and batches still get every ninth unit or more.
 * Each unit is a function that starts it and resolves when it has ended (a transaction: at its `end`).
 */
const waiting = { requests: [], scripts: [] };
const requestsAheadOfAScript = 8;
let running = false;
let requestsInARow = 0;

function runNext() {
  if (running) return;
  // Messages that came while the last unit ran are taken first, so that a request among them is
  // in its line when the next unit is chosen: a unit that ended in microtasks would otherwise
  // start the next one before this thread's event loop delivered them.
  for (let message = receiveMessageOnPort(parentPort); message; message = receiveMessageOnPort(parentPort)) {
    take(message.message);
  }
  const scriptsTurn = waiting.scripts.length > 0 && (waiting.requests.length === 0 || requestsInARow >= requestsAheadOfAScript);
  const unit = (scriptsTurn ? waiting.scripts : waiting.requests).shift();
  if (!unit) {
    for (const idle of idleWaiters.splice(0)) idle();
    return;
  }
  running = true;
  // Requests count only while a script waits for them.
  requestsInARow = scriptsTurn || waiting.scripts.length === 0 ? 0 : requestsInARow + 1;
  unit().finally(() => {
    running = false;
    runNext();
  });
}

/** Queues a unit in `line`; resolves or rejects as the unit's answer does, once it has run. `start` answers `{ answer, ended }`. */
function inLine(line, start) {
  if (closing) return Promise.reject(new Error('the PGlite database is closed'));
  return new Promise((resolve, reject) => {
    line.push(async () => {
      try {
        const { answer, ended } = start();
        answer.then(resolve, reject);
        await ended;
      } catch (error) {
        // A unit that could not start, or a transaction whose end failed after it was answered (a no-op then).
        reject(error);
      }
    });
  });
}

/**
 * Who waits for no unit to run or wait: `close`, so that what was sent before it runs first, as it
 * did in PGlite's own lock. A unit sent after it is refused (`closing`), so a caller that goes on
 * sending cannot hold the close off.
 */
const idleWaiters = [];
let closing = false;
function whenIdle() {
  if (!running && waiting.requests.length === 0 && waiting.scripts.length === 0) return Promise.resolve();
  return new Promise((idle) => idleWaiters.push(idle));
}

/** A unit that ends when it answers. */
const answering = (run) => () => {
  const answer = run();
  return { answer, ended: answer };
};

/** Answers a message, or queues the unit it starts (runNext runs it). */
function take(message) {
  const { id, kind } = message;
  const answerTimed = reportFile ? (id, outcome) => answer(id, timed(message, outcome)) : answer;
  switch (kind) {
    case 'script':
      answerTimed(
        id,
        inLine(
          waiting.scripts,
          answering(() => script(message.statements)),
        ),
      );
      return;
    case 'query':
      if (message.tx === undefined) {
        answerTimed(
          id,
          inLine(
            waiting.requests,
            answering(() => rowsOf(db, message.text, message.params)),
          ),
        );
        return;
      }
      // clientOf throws for a transaction that has ended: that request is refused, the worker goes on.
      answerTimed(id, (async () => rowsOf(clientOf(message.tx), message.text, message.params))());
      return;
    case 'exec': {
      const exec = async () => {
        await clientOf(message.tx).exec(message.sql);
        return {};
      };
      answerTimed(id, message.tx === undefined ? inLine(waiting.requests, answering(exec)) : exec());
      return;
    }
    case 'begin':
      answerTimed(id, inLine(waiting.requests, begin));
      return;
    case 'end':
      answerTimed(id, end(message.tx, message.commit));
      return;
    case 'listen':
      answerTimed(id, listen(message.channel));
      return;
    case 'unlisten':
      answerTimed(id, unlisten(message.channel));
      return;
    case 'close':
      answerTimed(
        id,
        (async () => {
          closing = true;
          await whenIdle();
          if (reportFile) writeStatementReport();
          await db.close();
          return {};
        })(),
      );
      return;
    default:
      parentPort.postMessage({ id, error: { message: `unknown message ${kind} to the PGlite worker`, fields: {} } });
  }
}

parentPort.on('message', (message) => {
  take(message);
  runNext();
});

parentPort.postMessage({ kind: 'ready' });
