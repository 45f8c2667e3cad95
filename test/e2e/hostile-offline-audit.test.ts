import { spawn } from 'node:child_process';
import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { leafHash, referenceInclusionProof, referenceRoot } from '@hallmark/merkle';
import { hashProvenanceRecord, leafInputOf } from '@hallmark/provenance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';
import { waitFor } from '../support/wait.ts';

// Review of the OFFLINE auditor: `hallmark audit <export.json> --jwks <jwks.json>` (apps/hallmark),
// `auditExport` / `verifyOffline` (packages/client) and the Python client's `audit_export` /
// `verify_offline` (clients/python/hallmark/offline, run with Debian's /usr/bin/python3).
//
// An auditor runs these on files a brand hands over: the export is untrusted. docs/COMPLIANCE.md
// ("Auditing an export") promises: the checkpoint's signature under the owner's service signing key,
// its origin naming the asset, then "against the signed size and root, that the events are exactly
// leaves 0…size−1, each event's hash from its content, each prevHash link, each leaf hash, and each
// inclusion proof. Exit code 0 when valid, 1 otherwise, with every problem listed". README: exit 70
// is "an unexpected error" (a fault of ours), 2 a wrong command line. The Python client's
// audit_export "does the same checks as auditExport" (its module docstring), and takes "an export as
// it arrived: what cannot be read ... is a problem of the report, never an exception".
//
// No hostile export was judged valid. Found and fixed (2026-12-05, nine of twelve failing before):
// audit-path hex was decoded as each language's decoder allowed (TypeScript kept what it could read of
// `zz`, Python skipped spaces); members of another JSON type were judged differently by the two
// auditors (Python took `true` for 1 and a missing prevHash for null, TypeScript made ["acc"] into
// "acc"); text after a good signature line was passed over; `null` files, a 10,000-level assetId and
// junk in a saved key set crashed the command (exit 70); a million unreadable events printed a 73 MB
// report and 16 M path nodes took gigabytes; and a report over 64 KiB was cut short in a pipe.
//
// A genuine export and key set come from the embedded product over real HTTP (an auction object with
// six chained events, and a generated code with one); every hostile variant is derived from them.
// Every child process (the CLI, Python) is bounded by a timeout; the CLI by a 1 GiB heap.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;
type Export = ComplianceExportDocument;
type ExportEvent = Export['events'][number];

const repo = fileURLToPath(new URL('../..', import.meta.url));
const cliPath = join(repo, 'apps/hallmark/bin/hallmark.js');
const pythonClient = join(repo, 'clients/python');
const python = '/usr/bin/python3';
const gtin = '09506000134352';

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The first MiB of stdout (the rest is only counted). */
  stdout: string;
  stdoutBytes: number;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/**
 * Runs a child with a hard timeout. Its stdout goes to a pipe (only the first MiB kept, all of it
 * counted) or, with `stdoutFile`, to that file, whose size is then what it printed: `hallmark`
 * writes to a pipe asynchronously and exits with process.exit, so a pipe shows only what got
 * through before the exit (see the test of a report bigger than a pipe's buffer).
 */
function runChild(
  command: string,
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
  stdoutFile?: string,
): Promise<ChildRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const fd = stdoutFile ? openSync(stdoutFile, 'w') : undefined;
    const child = spawn(command, args, { env, stdio: ['ignore', fd ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stdoutBytes = 0;
    let stderr = '';
    let timedOut = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdout.length < 1_048_576) stdout += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 100_000) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (fd !== undefined && stdoutFile) {
        closeSync(fd);
        stdoutBytes = statSync(stdoutFile).size;
        const head = Buffer.alloc(Math.min(stdoutBytes, 1_048_576));
        const reader = openSync(stdoutFile, 'r');
        readSync(reader, head, 0, head.length, 0);
        closeSync(reader);
        stdout = head.toString('utf8');
        rmSync(stdoutFile, { force: true });
      }
      resolve({ code, signal, stdout, stdoutBytes, stderr, ms: Date.now() - started, timedOut });
    });
  });
}

let outputs = 0;

/** `hallmark <args>`, heap capped at 1 GiB, no HALLMARK_DEBUG; stdout to a file unless `pipe`. */
function hallmark(args: string[], timeoutMs = 20_000, { pipe = false }: { pipe?: boolean } = {}): Promise<ChildRun> {
  const env = { ...process.env };
  delete env.HALLMARK_DEBUG;
  outputs += 1;
  const stdoutFile = pipe ? undefined : join(tmpdir(), `hallmark-review-audit-out-${process.pid}-${outputs}.txt`);
  return runChild(process.execPath, ['--max-old-space-size=1024', cliPath, ...args], timeoutMs, env, stdoutFile);
}

/** The Python client's audit_export / verify_offline over a batch of files: one JSON result per job. */
const pythonScript = `
import json, sys
sys.path.insert(0, ${JSON.stringify(pythonClient)})
from hallmark.offline import audit_export, verify_offline
with open(sys.argv[1], encoding="utf-8") as jobs_file:
    jobs = json.load(jobs_file)
results = []
for job in jobs:
    try:
        with open(job["jwks"], encoding="utf-8") as f:
            jwks = json.load(f)
        if "export" in job:
            with open(job["export"], encoding="utf-8") as f:
                document = json.load(f)
            report = audit_export(document, jwks)
            results.append({"valid": report.valid, "problems": report.problems})
        else:
            verdict = verify_offline(job["link"], jwks)
            results.append({"valid": verdict.valid, "reason": verdict.reason})
    except BaseException as error:
        results.append({"error": (type(error).__name__ + ": " + str(error))[:300]})
print(json.dumps(results))
`;

interface Verdict {
  valid?: boolean;
  problems?: string[];
  reason?: string | null;
  error?: string;
}

const clone = <T>(value: T): T => structuredClone(value);
const hex = (buffer: Buffer) => buffer.toString('hex');

/** Recomputes hash, prevHash and leafHash from `from` on: a chain whose every link is valid again. */
function rechain(document: Export, from: number): void {
  let prevHash = from === 0 ? null : (document.events[from - 1] as ExportEvent).hash;
  for (const event of document.events.slice(from)) {
    event.prevHash = prevHash;
    event.hash = hashProvenanceRecord({
      assetId: document.assetId,
      accountId: document.owner.accountId,
      environment: document.owner.environment as 'live' | 'test',
      sequence: event.sequence,
      type: event.type,
      occurredAt: event.occurredAt,
      data: event.data,
      prevHash,
    });
    event.leafHash = hex(leafHash(leafInputOf(event.hash)));
    prevHash = event.hash;
  }
}

/** Renumbers the events and gives them proofs of a tree of exactly them (unsigned treeSize/rootHash too); the checkpoint stays. */
function reprove(document: Export): void {
  const leaves = document.events.map((event) => leafHash(leafInputOf(event.hash)));
  document.treeSize = leaves.length;
  document.rootHash = hex(referenceRoot(leaves));
  document.events.forEach((event, index) => {
    event.leafIndex = index;
    event.auditPath = referenceInclusionProof(index, leaves).map(hex);
  });
}

describe('the offline auditor against files a brand hands over', () => {
  let t: TestProduct;
  let folder: string;
  let brandId: string;
  let rivalId: string;
  let object: Export; // an auction object: 6 chained events
  let code: Export; // a generated code: 1 event
  let codeUrl: string;
  let epcis: Json;
  let jwks: JsonWebKeySet;
  let jwksPath: string;
  let fileCount = 0;

  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(t.url, method, `/api/v1${path}`, options);

  /** Writes `text` to a fresh file of the folder and gives its path. */
  const file = async (text: string, name = 'export'): Promise<string> => {
    fileCount += 1;
    const path = join(folder, `${name}-${fileCount}.json`);
    await writeFile(path, text);
    return path;
  };

  /** Runs the Python client over each job (in one process, 20 s at most). */
  const pythonJudges = async (jobs: Array<Record<string, string>>): Promise<Verdict[]> => {
    const script = await file(pythonScript, 'script');
    const jobsPath = await file(JSON.stringify(jobs), 'jobs');
    const run = await runChild(python, [script, jobsPath], 20_000);
    expect(run.timedOut, 'the Python auditor ran past 20 s').toBe(false);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Verdict[];
  };

  /** auditExport (in process) and the Python audit_export, each over the same file text. */
  const judgeBoth = async (
    variants: Array<{ name: string; text: string; jwksText?: string }>,
  ): Promise<Array<{ name: string; ts: Verdict; py: Verdict }>> => {
    const jobs: Array<Record<string, string>> = [];
    const ts: Verdict[] = [];
    for (const variant of variants) {
      const keysText = variant.jwksText ?? JSON.stringify(jwks);
      jobs.push({ export: await file(variant.text), jwks: variant.jwksText ? await file(keysText, 'jwks') : jwksPath });
      try {
        const report = auditExport(JSON.parse(variant.text) as Export, JSON.parse(keysText) as JsonWebKeySet);
        ts.push({ valid: report.valid, problems: report.problems });
      } catch (error) {
        ts.push({ error: `${(error as Error).name}: ${(error as Error).message}` });
      }
    }
    const py = await pythonJudges(jobs);
    return variants.map((variant, index) => ({ name: variant.name, ts: ts[index] as Verdict, py: py[index] as Verdict }));
  };

  beforeAll(async () => {
    t = await startTestProduct();
    folder = await mkdtemp(join(tmpdir(), 'hallmark-review-offline-audit-'));
    const operator = t.product.generatedOperatorKey as string;
    const account = async (name: string) => {
      const created = await api('POST', '/accounts', { key: operator, body: { name, tier: 'enterprise' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
    };
    const brand = await account('Maison Audit');
    const rival = await account('Rival House');
    brandId = brand.id;
    rivalId = rival.id;
    const grant = await api('POST', `/accounts/${brand.id}/gtins`, { key: operator, body: { gtin } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);

    const generated = await api('POST', '/code/generate', {
      key: brand.key,
      body: { gtin, serialNumber: 'AUDIT-1', metadata: { name: 'Audited item' } },
    });
    expect(generated.status, JSON.stringify(generated.body)).toBe(201);
    codeUrl = generated.body.url;

    const registered = await api('POST', '/auction/objects/register', {
      key: brand.key,
      body: { title: 'Submariner 1680', category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const events: Array<[string, Record<string, unknown>]> = [
      ['cataloged', { description: 'Lot 12 — “Submariner”, ref. 1680' }],
      ['exhibited', { actorName: 'Salle 4, Genève' }],
      [
        'condition_report',
        {
          evidence: {
            grade: 9.5,
            note: 'tiny scratch at 4 o’clock ✓ "dial"\n',
            measures: [40, 1e21, 0.000001, -0],
            nested: { z: 1, a: null, é: true, '\u{1F600}': 'x' },
          },
        },
      ],
      ['authenticated', { evidence: { by: 'Independent Lab', certificate: 'C-0042' } }],
      ['listed', {}],
    ];
    for (const [eventType, extra] of events) {
      const recorded = await api('POST', '/auction/provenance/events', {
        key: brand.key,
        body: { objectId, eventType, actorRole: 'auction_house', ...extra },
      });
      expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    }
    // The rival signs once, so the key set holds a signing key of another account.
    const rivalObject = await api('POST', '/auction/objects/register', {
      key: rival.key,
      body: { title: 'Rival lot', category: 'painting' },
    });
    expect(rivalObject.status, JSON.stringify(rivalObject.body)).toBe(201);

    const exportOf = (id: string, format: string) =>
      waitFor(`the ${format} export of ${id}`, async () => {
        const answer = await api('GET', `/compliance/${id}/export?format=${format}`, { key: brand.key });
        return answer.status === 200 ? answer.body : undefined;
      });
    object = (await exportOf(objectId, 'json')) as unknown as Export;
    code = (await exportOf(generated.body.assetId, 'json')) as unknown as Export;
    epcis = await exportOf(objectId, 'epcis');
    jwks = (await call(t.url, 'GET', '/.well-known/jwks.json')).body as unknown as JsonWebKeySet;
    jwksPath = await file(JSON.stringify(jwks), 'jwks');
    expect(object.events.length).toBe(6);
    expect(code.events.length).toBe(1);
    expect(object.owner).toEqual({ accountId: brandId, environment: 'live' });
    expect(jwks.keys.some((key) => (key as Json).hallmark_account === rivalId)).toBe(true);
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('says INVALID to every reordering, duplication, drop or rewrite of the history under the kept checkpoint, in TS, Python and the command', async () => {
    // COMPLIANCE.md: "changing, dropping or adding any event breaks a proof or the count", and the
    // auditor reads size and root only from the signed checkpoint. The genuine export is the control.
    const forgeries: Array<{ name: string; text: string }> = [];
    const forge = (name: string, change: (document: Export) => void, base: Export = object) => {
      const document = clone(base);
      change(document);
      forgeries.push({ name, text: JSON.stringify(document) });
    };
    const swap = (document: Export, a: number, b: number) => {
      const events = document.events;
      [events[a], events[b]] = [events[b] as ExportEvent, events[a] as ExportEvent];
    };
    forge('events 3 and 4 swapped', (d) => swap(d, 2, 3));
    forge('events reversed', (d) => d.events.reverse());
    forge('contents of 3 and 4 swapped, renumbered, re-chained and re-proven', (d) => {
      const [a, b] = [d.events[2] as ExportEvent, d.events[3] as ExportEvent];
      for (const member of ['type', 'occurredAt', 'data'] as const)
        [a[member], b[member]] = [b[member] as never, a[member] as never];
      rechain(d, 2);
      reprove(d);
    });
    forge('event 4 replaced by a copy of event 3', (d) => {
      d.events[3] = clone(d.events[2] as ExportEvent);
    });
    forge('the last event appended twice', (d) => d.events.push(clone(d.events[5] as ExportEvent)));
    forge('the last event dropped', (d) => d.events.pop());
    forge('the last event dropped, the rest re-proven as a tree of 5', (d) => {
      d.events.pop();
      reprove(d);
    });
    forge('the condition report dropped, the rest re-chained and re-proven', (d) => {
      d.events.splice(3, 1);
      d.events.forEach((event, index) => {
        event.sequence = index + 1;
      });
      rechain(d, 3);
      reprove(d);
    });
    forge('the condition report rewritten, its hash kept', (d) => {
      ((d.events[3] as ExportEvent).data.evidence as Json).grade = 10;
    });
    forge('the condition report rewritten, every prevHash link valid again', (d) => {
      ((d.events[3] as ExportEvent).data.evidence as Json).grade = 10;
      rechain(d, 3);
    });
    forge('the condition report rewritten, re-chained and re-proven (unsigned root updated)', (d) => {
      ((d.events[3] as ExportEvent).data.evidence as Json).grade = 10;
      rechain(d, 3);
      reprove(d);
    });
    forge('an event’s type changed', (d) => {
      (d.events[4] as ExportEvent).type = 'condition_report';
    });
    forge('the owner moved to another account, re-chained', (d) => {
      d.owner.accountId = rivalId;
      rechain(d, 0);
    });
    forge('the owner moved to the test environment, re-chained', (d) => {
      d.owner.environment = 'test';
      rechain(d, 0);
    });
    forge('the history re-told as another asset’s (origin names the object), re-chained', (d) => {
      d.assetId = code.assetId;
      rechain(d, 0);
      reprove(d);
    });
    forge('the checkpoint of another asset of the same account', (d) => {
      d.checkpoint = clone(code.checkpoint);
    });
    forge('the unsigned treeSize 2^53', (d) => {
      d.treeSize = 2 ** 53;
    });
    forge('the unsigned treeSize -1', (d) => {
      d.treeSize = -1;
    });
    for (const leafIndex of [6, -1, 2 ** 53, 1e308, 0.5]) {
      forge(`event 2's leafIndex ${leafIndex}`, (d) => {
        (d.events[1] as ExportEvent).leafIndex = leafIndex;
      });
    }
    forge('an audit path one node too long', (d) => (d.events[1] as ExportEvent).auditPath.push('00'.repeat(32)));
    forge('an audit path one node too short', (d) => (d.events[1] as ExportEvent).auditPath.pop());
    forge('an audit path emptied', (d) => {
      (d.events[1] as ExportEvent).auditPath = [];
    });
    forge('an audit path of 100,000 nodes', (d) => {
      (d.events[1] as ExportEvent).auditPath = Array.from({ length: 100_000 }, () => '11'.repeat(32));
    });

    const results = await judgeBoth([{ name: 'genuine', text: JSON.stringify(object) }, ...forgeries]);
    const [genuine, ...judged] = results;
    expect(genuine?.ts).toEqual({ valid: true, problems: [] });
    expect(genuine?.py).toEqual({ valid: true, problems: [] });
    const accepted = judged.filter(({ ts, py }) => ts.valid !== false || py.valid !== false || ts.error || py.error);
    expect(accepted, 'forgeries not judged INVALID by both auditors').toEqual([]);

    // The command: 0 for the genuine export, 1 with problems listed for forgeries, no stack.
    const picks = [
      'genuine',
      'the condition report rewritten, re-chained and re-proven (unsigned root updated)',
      'the last event dropped, the rest re-proven as a tree of 5',
    ];
    const runs = await Promise.all(
      picks.map(async (name) => {
        const text = name === 'genuine' ? JSON.stringify(object) : (forgeries.find((f) => f.name === name)?.text as string);
        return hallmark(['audit', await file(text), '--jwks', jwksPath]);
      }),
    );
    expect(runs.map((run) => run.code)).toEqual([0, 1, 1]);
    for (const run of runs.slice(1)) {
      const report = JSON.parse(run.stdout) as Json;
      expect(report.valid).toBe(false);
      expect(report.problems.length).toBeGreaterThan(0);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it('reads audit-path hex as the service writes it (64 lowercase hex digits), and both auditors judge a malformed node alike', async () => {
    // COMPLIANCE.md: `auditPath: [hex]`, SHA-256 nodes. The TypeScript auditor decodes a node with
    // Buffer.from(node, 'hex') (audit-export.ts:159), which stops at the first byte it cannot read and
    // silently keeps the prefix, so "<64 hex>0", "<64 hex>zz" or "<64 hex>١" (a Unicode digit) proves
    // as the genuine node. Python's bytes.fromhex (audit_export.py:239) refuses those but accepts
    // "ab cd ef …" (it skips white space), which Node stops reading at the first space. The same file
    // is then VALID for one auditor and INVALID for the other. A careful auditor expects a node that
    // is not 64 hex digits to be a problem, in both.
    const node = (object.events[1] as ExportEvent).auditPath[0] as string;
    expect(node).toMatch(/^[0-9a-f]{64}$/);
    const withNode = (name: string, replacement: string) => {
      const document = clone(object);
      (document.events[1] as ExportEvent).auditPath[0] = replacement;
      return { name, text: JSON.stringify(document) };
    };
    const malformed = [
      withNode('65 hex digits (odd length)', `${node}0`),
      withNode('trailing non-hex garbage', `${node}zz`),
      withNode('a trailing Arabic-Indic digit', `${node}\u0661`),
      withNode('a trailing NUL', `${node}\u0000`),
      withNode('bytes separated by spaces', (node.match(/../g) as string[]).join(' ')),
      withNode('a leading space', ` ${node}`),
    ];
    const results = await judgeBoth(malformed);
    const notInvalid = results.filter(({ ts, py }) => ts.valid !== false || py.valid !== false);
    expect(
      notInvalid.map(
        ({ name, ts, py }) => `${name}: TypeScript ${ts.valid ? 'VALID' : 'invalid'}, Python ${py.valid ? 'VALID' : 'invalid'}`,
      ),
      'malformed audit-path nodes judged VALID',
    ).toEqual([]);

    // Upper case is the same bytes; whatever the verdict, the two auditors must give the same one.
    const [upper] = await judgeBoth([withNode('upper case', node.toUpperCase())]);
    expect(upper?.ts.valid).toBe(upper?.py.valid);
  }, 30_000);

  it('the TypeScript and the Python auditor judge every file alike (members of another JSON type or spelling)', async () => {
    // Brief/README: the Python client "does the same checks as auditExport"; a file the two judge
    // differently is a finding. These variants change only members no hash covers, so the question
    // is what each auditor makes of a malformed export, and they must agree. Today they do not:
    // - TS requires each event member's type (whyNotAnEvent, audit-export.ts:170-190); Python never
    //   checks eventId, auditPath or prevHash's presence (audit_export.py:211-243), so an event without
    //   eventId, or a one-event export without auditPath (a generated code), is VALID in Python only;
    // - Python's `True == 1` and `isinstance(True, int)`: leafIndex true at position 2 is VALID in Python;
    // - `"leafIndex": 1.0` (JSON's same number, as a tool that writes floats re-emits it) fails
    //   Python's isinstance(leaf_index, int) (audit_export.py:242): INVALID in Python, VALID in TS;
    // - owner.accountId ["acc_…"]: TS reads String(["acc_…"]) = "acc_…" (audit-export.ts:229) and says
    //   VALID (with owner undefined in the report), Python reads "['acc_…']" and says INVALID.
    const variants: Array<{ name: string; text: string }> = [];
    const variant = (name: string, change: (document: Json) => void, base: Export = object) => {
      const document = clone(base) as unknown as Json;
      change(document);
      variants.push({ name, text: JSON.stringify(document) });
    };
    variant('event 2 without eventId', (d) => {
      delete d.events[1].eventId;
    });
    variant('event 2 with eventId 42', (d) => {
      d.events[1].eventId = 42;
    });
    variant('a one-event export without auditPath', (d) => delete d.events[0].auditPath, code);
    variant(
      'a one-event export with auditPath null',
      (d) => {
        d.events[0].auditPath = null;
      },
      code,
    );
    variant('a one-event export whose first event has no prevHash', (d) => delete d.events[0].prevHash, code);
    variant('event 2 with leafIndex true', (d) => {
      d.events[1].leafIndex = true;
    });
    variant(
      'a one-event export with leafIndex false',
      (d) => {
        d.events[0].leafIndex = false;
      },
      code,
    );
    variant(
      'a one-event export with treeSize true',
      (d) => {
        d.treeSize = true;
      },
      code,
    );
    variant('owner.accountId as a one-element array', (d) => {
      d.owner.accountId = [d.owner.accountId];
    });
    variant('owner.environment as a one-element array', (d) => {
      d.owner.environment = [d.owner.environment];
    });
    // The same numbers written as floats: only the text differs.
    variants.push({
      name: 'every leafIndex and sequence written as a float (1.0)',
      text: JSON.stringify(object).replace(/"(leafIndex|sequence)":(\d+)/g, '"$1":$2.0'),
    });
    variants.push({ name: 'treeSize written as 6.0', text: JSON.stringify(object).replace(/"treeSize":6/, '"treeSize":6.0') });

    const results = await judgeBoth(variants);
    const disagreements = results
      .filter(({ ts, py }) => ts.valid !== py.valid || Boolean(ts.error) !== Boolean(py.error))
      .map(
        ({ name, ts, py }) =>
          `${name}: TypeScript ${ts.error ?? (ts.valid ? 'VALID' : 'invalid')}, Python ${py.error ?? (py.valid ? 'VALID' : 'invalid')}`,
      );
    expect(disagreements, 'files the two auditors judge differently').toEqual([]);
  }, 30_000);

  it('refuses a checkpoint note that was tampered with: CRLF, a second time line, a forged first signature, another key name, another origin', async () => {
    // COMPLIANCE.md "Signed checkpoints": the signature is over the text lines with their newlines;
    // a checker takes size and root only from the verified note. Any edit of the signed text, or a
    // signature line by the right key name that does not verify, must make the audit INVALID.
    const note = object.checkpoint?.note as string;
    const [body, signatures] = note.split('\n\n') as [string, string];
    const signatureLine = signatures.trim();
    const name = /^\u2014 (\S+) /.exec(signatureLine)?.[1] as string;
    const blob = signatureLine.split(' ').pop() as string;
    const badBlob = Buffer.from(blob, 'base64');
    (badBlob as Buffer)[10] = ((badBlob as Buffer)[10] as number) ^ 1;
    const withNote = (label: string, text: string) => {
      const document = clone(object);
      (document.checkpoint as { note: string }).note = text;
      return { name: label, text: JSON.stringify(document) };
    };
    const lines = body.split('\n');
    const variants = [
      withNote('CRLF line ends', note.replace(/\n/g, '\r\n')),
      withNote('CRLF in the body only', `${body.replace(/\n/g, '\r\n')}\n\n${signatures}`),
      withNote('a second hallmark-signed-at line', `${body}\nhallmark-signed-at 2030-01-01T00:00:00.000Z\n\n${signatures}`),
      withNote(
        'the time line moved a year on',
        note.replace(/hallmark-signed-at (\d{4})/, (_m, y) => `hallmark-signed-at ${Number(y) + 1}`),
      ),
      withNote(
        'the time line removed',
        `${lines.filter((line) => !line.startsWith('hallmark-signed-at')).join('\n')}\n\n${signatures}`,
      ),
      withNote('the tree size in Arabic-Indic digits', note.replace(/\n6\n/, '\n\u0666\n')),
      withNote('the tree size 06', note.replace(/\n6\n/, '\n06\n')),
      withNote(
        'the root without its = padding',
        note.replace(`\n${lines[2]}\n`, `\n${(lines[2] as string).replace(/=+$/, '')}\n`),
      ),
      withNote(
        'a bad signature by the same key before the good one',
        `${body}\n\n\u2014 ${name} ${badBlob.toString('base64')}\n${signatureLine}\n`,
      ),
      withNote('the signature under another key name', note.replace(name, `${name}x`)),
      withNote('the signature line with an en dash', note.replace('\u2014', '\u2013')),
      withNote('no blank line before the signature', note.replace('\n\n', '\n')),
      withNote('an empty note', ''),
    ];
    const results = await judgeBoth(variants);
    const accepted = results.filter(({ ts, py }) => ts.valid !== false || py.valid !== false || ts.error || py.error);
    expect(accepted, 'tampered checkpoints judged VALID (or thrown)').toEqual([]);
    for (const { ts } of results)
      expect(ts.problems?.some((p) => p.startsWith('Checkpoint:') || p.includes('checkpoint'))).toBe(true);
  }, 30_000);

  it('refuses a signed note with anything but signature lines after the blank line (C2SP signed-note, Go note.Open)', async () => {
    // The export's checkpoint is "a C2SP tlog-checkpoint signed note" (COMPLIANCE.md). The signed-note
    // format is: text, a blank line, then signature lines "— <name> <base64>\n" only; the reference
    // verifier (golang.org/x/mod/sumdb/note.Open) rejects a note whose signature block holds any
    // other line, or more than 100 signatures. openSignedCheckpoint (packages/provenance/src/
    // checkpoint.ts:78-93, and checkpoint.py:78-99) returns at the first signature it verifies, so
    // text after it is never looked at: the note below audits VALID here and is malformed for every
    // conforming C2SP verifier (a witness, a monitor) the auditor would hand it to.
    const note = object.checkpoint?.note as string;
    const withNote = (label: string, text: string) => {
      const document = clone(object);
      (document.checkpoint as { note: string }).note = text;
      return { name: label, text: JSON.stringify(document) };
    };
    const variants = [
      withNote('trailing garbage after the signature', `${note}this line is not a signature\n`),
      withNote('a second, unsigned checkpoint after the signature', `${note}\nhallmark/assets/${object.assetId}\n7\nAAAA\n`),
      withNote('the signature line without its newline, then text', `${note.trimEnd()} trailing words\n`),
    ];
    const results = await judgeBoth(variants);
    expect(
      results.filter(({ ts, py }) => ts.valid !== false || py.valid !== false).map(({ name }) => name),
      'malformed signed notes judged VALID',
    ).toEqual([]);
  }, 30_000);

  it('refuses a key set that vouches for the checkpoint key only through __proto__/constructor members, another account or environment', async () => {
    // SIGNING.md "Audits": the checkpoint counts only under a key whose own hallmark_key_type is
    // "signing", hallmark_account the asset's account, hallmark_environment the asset's. JSON.parse
    // makes "__proto__" an own member, never the prototype, so a member hidden there vouches for
    // nothing; the same for "constructor". Python dicts alike. Both must say INVALID.
    const kid = object.checkpoint?.keyId as string;
    const signing = jwks.keys.find((key) => key.kid === kid) as Json;
    expect(signing).toMatchObject({ hallmark_account: brandId, hallmark_key_type: 'signing', hallmark_environment: 'live' });
    const others = jwks.keys.filter((key) => key.kid !== kid);
    const withEntry = (name: string, entryText: string) => ({
      name,
      text: JSON.stringify(object),
      jwksText: `{"keys":[${[entryText, ...others.map((key) => JSON.stringify(key))].join(',')}]}`,
    });
    const { hallmark_key_type: _type, hallmark_account: _account, hallmark_environment: _environment, ...bare } = signing;
    const bareText = JSON.stringify(bare).slice(0, -1);
    const variants = [
      withEntry(
        'hallmark_key_type only in __proto__',
        `${bareText},"hallmark_account":"${brandId}","hallmark_environment":"live","__proto__":{"hallmark_key_type":"signing"}}`,
      ),
      withEntry(
        'hallmark_key_type public, "signing" in __proto__',
        `${bareText},"hallmark_account":"${brandId}","hallmark_environment":"live","hallmark_key_type":"public","__proto__":{"hallmark_key_type":"signing"}}`,
      ),
      withEntry(
        'hallmark_account only in constructor',
        `${bareText},"hallmark_key_type":"signing","hallmark_environment":"live","constructor":{"hallmark_account":"${brandId}"}}`,
      ),
      withEntry('the brand’s key relabelled as the rival’s', JSON.stringify({ ...signing, hallmark_account: rivalId })),
      withEntry('the brand’s key relabelled as a test key', JSON.stringify({ ...signing, hallmark_environment: 'test' })),
      withEntry(
        'the brand’s key without hallmark_key_type',
        JSON.stringify(bare).replace(/}$/, `,"hallmark_account":"${brandId}","hallmark_environment":"live"}`),
      ),
      withEntry(
        'the kid kept, x replaced by the rival’s key',
        JSON.stringify({ ...signing, x: (jwks.keys.find((key) => (key as Json).hallmark_account === rivalId) as Json).x }),
      ),
    ];
    const results = await judgeBoth(variants);
    expect(
      results.filter(({ ts, py }) => ts.valid !== false || py.valid !== false || ts.error || py.error).map(({ name }) => name),
      'key sets under which a checkpoint was accepted',
    ).toEqual([]);
  }, 30_000);

  it('`hallmark audit` refuses files that are not an export or not a key set cleanly (exit 1 or 2, never 70), EPCIS included', async () => {
    // README: exit 1 "refused or failed (verify/audit: not valid)", 2 "a wrong command line", 70 "an
    // unexpected error" (a fault of ours). A brand's file that is JSON but not an export — `null`,
    // an array, a number — or a key set file that is `null`, must be refused, not crash. audit.ts:21
    // reads `jwks.keys` and audit.ts:23 `document.events` before checking either is an object, so
    // `null` throws a TypeError: exit 70. COMPLIANCE.md: the command reads only the JSON form, so an
    // EPCIS export is refused (never "valid"). The Python audit_export takes the same files without
    // an exception ("never an exception", its docstring); a `null` key set raises AttributeError there
    // (keys.py:158 calls jwks.get).
    const genuinePath = await file(JSON.stringify(object));
    const cases: Array<{ name: string; exportText: string; jwksText?: string }> = [
      { name: 'export null', exportText: 'null' },
      { name: 'export []', exportText: '[]' },
      { name: 'export 5', exportText: '5' },
      { name: 'export "x"', exportText: '"x"' },
      { name: 'export {"events": null}', exportText: '{"events":null}' },
      { name: 'an EPCIS export', exportText: JSON.stringify(epcis) },
      { name: 'export not JSON (UTF-16 BOM)', exportText: `\ufeff${JSON.stringify(object)}` },
      { name: 'key set null', exportText: '', jwksText: 'null' },
      { name: 'key set []', exportText: '', jwksText: '[]' },
      { name: 'key set {"keys": [null, 5, "x"]}', exportText: '', jwksText: '{"keys":[null,5,"x"]}' },
    ];
    const runs = await Promise.all(
      cases.map(async ({ name, exportText, jwksText }) => {
        const exportPath = exportText ? await file(exportText) : genuinePath;
        const keysPath = jwksText ? await file(jwksText, 'jwks') : jwksPath;
        const run = await hallmark(['audit', exportPath, '--jwks', keysPath]);
        return { name, exportPath, keysPath, run };
      }),
    );
    const bad = runs
      .filter(({ run }) => run.timedOut || (run.code !== 1 && run.code !== 2) || /\n\s+at /.test(run.stderr))
      .map(({ name, run }) => `${name}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''} ${run.stderr.trim()}`);
    expect(bad, 'files the command did not refuse cleanly').toEqual([]);

    const python = await pythonJudges(runs.map(({ exportPath, keysPath }) => ({ export: exportPath, jwks: keysPath })));
    const pythonBad = python
      .map((verdict, index) => ({ name: runs[index]?.name, verdict }))
      .filter(
        ({ name, verdict }) =>
          verdict.valid !== false && !(name === 'export not JSON (UTF-16 BOM)' && verdict.error?.startsWith('JSONDecodeError')),
      )
      .map(({ name, verdict }) => `${name}: ${verdict.error ?? 'VALID'}`);
    expect(pythonBad, 'files the Python audit_export did not judge INVALID without an exception').toEqual([]);
  }, 60_000);

  it('`hallmark audit` prints its whole report into a pipe (`hallmark audit … | jq`), not the first 64 KiB', async () => {
    // README: "list commands take --json"; an auditor scripts `hallmark audit x.json --jwks k.json |
    // jq .valid`. The command writes the report (audit.ts:25, cli.ts:80 process.stdout.write) and the
    // CLI then calls process.exit(code) (cli.ts:250): Node writes to a pipe asynchronously, so what
    // did not fit the pipe's 64 KiB buffer by then is dropped and the reader gets cut-off JSON. Any
    // report of about a megabyte does: here an export whose unread `format` is 1,000,000 characters,
    // which the report repeats in its problem (audit-export.ts:111). Measured: 1 MB and 4 MB reports
    // reach `| wc -c` as 65,536 bytes, 16 MB as 131,072. Expected: the same bytes as to a file.
    const text = JSON.stringify({ ...object, format: 'x'.repeat(1_000_000) });
    const path = await file(text);
    const [toFile, toPipe] = await Promise.all([
      hallmark(['audit', path, '--jwks', jwksPath]),
      hallmark(['audit', path, '--jwks', jwksPath], 20_000, { pipe: true }),
    ]);
    expect(toFile.code).toBe(1);
    expect((JSON.parse(toFile.stdout) as Json).valid).toBe(false);
    expect(toPipe.code).toBe(1);
    expect(toPipe.stdoutBytes, 'bytes of the report that reached the pipe').toBe(toFile.stdoutBytes);
  }, 30_000);

  it('`hallmark audit` answers a 2 MB export of 1,000,000 unreadable events within 20 s, with a bounded report', async () => {
    // docs/SECURITY.md and the brief: bounded work per input; auditWellFormedExport caps the report at
    // 100 problems (maxProblems, audit-export.ts:53). But auditExport lists one problem per unreadable
    // event outside that cap (audit-export.ts:221-245: a Map of every unreadable index, then
    // `[...unreadable].map(...)`, and for each kept problem a copy of every index), and the command
    // pretty-prints all of them (audit.ts:25). Measured (2026-12-05, this machine): a 2 MB file of
    // `0,0,0,…` (1 M events) prints a 73 MB report of 1,000,000 problem lines, 770 MB RSS, 9.6 s; 6 MB
    // (3 M) runs past 20 s; memory grows ~700 bytes per event, and at ~17 M events (a 34 MB file)
    // the Map passes V8's 2^24 entries and throws. The Python auditor keeps its 100-problem cap.
    // Expected: exit 1 and a report of at most ~100 problems (under 1 MB).
    const text = `{"format":"hallmark.compliance-export/1","assetId":${JSON.stringify(object.assetId)},"owner":${JSON.stringify(object.owner)},"treeSize":6,"rootHash":${JSON.stringify(object.rootHash)},"checkpoint":${JSON.stringify(object.checkpoint)},"events":[${'0,'.repeat(999_999)}0]}`;
    const run = await hallmark(['audit', await file(text), '--jwks', jwksPath], 20_000);
    expect(run.timedOut, `ran ${run.ms} ms`).toBe(false);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdoutBytes, 'the report printed for one bad file').toBeLessThan(1_000_000);
  }, 30_000);

  it('`hallmark audit` answers exports nested 10,000 levels deep within 20 s, exit 1, with a bounded report', async () => {
    // The brief: a 10,000-level-deep JSON file must neither crash nor hang the auditor. auditExport
    // puts the export's own `assetId` in the report unread (audit-export.ts:101), and the command
    // pretty-prints the report with 2-space indentation (audit.ts:25): an assetId of 10,000 nested
    // arrays prints as O(depth²) spaces: measured, 3,000 levels (6 kB of file) print an 18 MB report.
    // From ~4,000 levels the origin check's `${document.assetId}` (audit-export.ts:132) overflows the
    // stack inside the audit's try, and the catch's own String(document.assetId) (audit-export.ts:238)
    // overflows again outside it: exit 70 "Maximum call stack size exceeded". A deep owner.accountId
    // overflows in String() before the try (audit-export.ts:229): exit 70 too. Expected for each:
    // exit 1 (INVALID, problems listed), a report of a few kB.
    const depth = 10_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const genuine = JSON.stringify(object);
    const deep3k = `${'['.repeat(3_000)}${']'.repeat(3_000)}`;
    const cases = [
      { name: 'assetId', text: genuine.replace(`"assetId":${JSON.stringify(object.assetId)}`, `"assetId":${deep}`) },
      { name: 'assetId 3,000 deep', text: genuine.replace(`"assetId":${JSON.stringify(object.assetId)}`, `"assetId":${deep3k}`) },
      { name: 'owner.accountId', text: genuine.replace(`"accountId":${JSON.stringify(brandId)}`, `"accountId":${deep}`) },
      { name: 'an event’s data', text: genuine.replace('"data":{', `"data":{"deep":${deep},`) },
      { name: 'format', text: genuine.replace('"format":"hallmark.compliance-export/1"', `"format":${deep}`) },
    ];
    for (const { text } of cases) expect(text.length).toBeGreaterThan(genuine.length);
    const runs = await Promise.all(
      cases.map(async ({ name, text }) => ({
        name,
        run: await hallmark(['audit', await file(text), '--jwks', jwksPath], 20_000),
      })),
    );
    const bad = runs
      .filter(({ run }) => run.timedOut || run.code !== 1 || run.stdoutBytes > 100_000)
      .map(
        ({ name, run }) =>
          `${name}: exit ${run.code}${run.timedOut ? ' (timed out)' : ''}, ${run.stdoutBytes} bytes out, ${run.ms} ms; ${run.stderr.trim().slice(0, 200)}`,
      );
    expect(bad, 'deeply nested exports not answered INVALID with a bounded report').toEqual([]);
  }, 60_000);

  it('`hallmark audit` answers a 50 MB export (one event with 16 M audit-path nodes) within 20 s and 1 GiB, exit 1', async () => {
    // The brief: a 50 MB file must not take unbounded memory. auditWellFormedExport decodes every
    // node of an audit path into a Buffer before checking any (audit-export.ts:159), so 16 M empty
    // strings ("" is 3 bytes of file each) are 16 M Buffer objects. The audit only needs log2(size)
    // nodes: a path longer than the tree's height can be refused unread. Measured without a heap cap
    // (2026-12-05): this 48 MB file takes 20 s and 3.4 GB RSS (a 12 MB one 5 s and 0.96 GB), ~70×
    // the file; the Python auditor holds one shared b"" per node. Bounded here: 20 s, 1 GiB heap.
    const head = JSON.stringify({ ...object, events: [] }).slice(0, -2); // ends with "events":[
    const { auditPath: _path, ...first } = clone(object.events[0] as ExportEvent);
    const eventHead = JSON.stringify({ ...first, auditPath: [] }).slice(0, -2); // ends with "auditPath":[
    const count = 16_000_000;
    const nodes = `${'"",'.repeat(count - 1)}""`;
    const rest = object.events
      .slice(1)
      .map((event) => JSON.stringify(event))
      .join(',');
    const text = `${head}${eventHead}${nodes}]},${rest}]}`;
    expect(text.length).toBeGreaterThan(48_000_000);
    const run = await hallmark(['audit', await file(text), '--jwks', jwksPath], 20_000);
    expect(run.timedOut, `ran ${run.ms} ms`).toBe(false);
    expect(run.code, run.stderr.slice(0, 500)).toBe(1);
    expect(run.stdoutBytes).toBeLessThan(100_000);
  }, 40_000);

  it('verifyOffline and `hallmark verify --offline` judge a code alike with a key set holding junk entries, without a crash', async () => {
    // SIGNING.md "To verify a link offline": verifyOffline "fails closed" and the Python verify_offline
    // is its twin. A saved key set with an entry that is not a key (null), or a member of the wrong
    // type, is refused or skipped by Python (keys_of keeps only objects, keys.py:157-159; a listed
    // hallmark_owners_without_keys that is not a list is ignored, verify_offline.py:127-132), while
    // verifyOffline dereferences every entry (verify-offline.ts:46 `key.kty` on null, :52
    // `.some` on a string, :110 `.filter` on an object) and throws; the command then exits 70.
    // Expected: no exception, the same verdict as Python, and the command exits 0 or 1.
    const genuineVerdict = verifyOffline(codeUrl, jwks);
    expect(genuineVerdict.valid).toBe(true);
    const sets: Array<{ name: string; set: Json }> = [
      { name: 'a null entry first', set: { ...jwks, keys: [null, ...jwks.keys] } },
      { name: 'a number entry first', set: { ...jwks, keys: [5, ...jwks.keys] } },
      {
        name: 'another account’s key with hallmark_gtin_prefixes as a string',
        set: {
          ...jwks,
          keys: [
            ...jwks.keys,
            {
              ...(jwks.keys.find((key) => (key as Json).hallmark_account === rivalId) as Json),
              hallmark_gtin_prefixes: '9506000',
              hallmark_gtins: '0',
            },
          ],
        },
      },
      { name: 'hallmark_owners_without_keys as an object', set: { ...jwks, hallmark_owners_without_keys: {} } },
    ];
    const paths = await Promise.all(sets.map(({ set }) => file(JSON.stringify(set), 'jwks')));
    const python = await pythonJudges(paths.map((path) => ({ jwks: path, link: codeUrl })));
    const runs = await Promise.all(paths.map((path) => hallmark(['verify', '--offline', codeUrl, '--jwks', path])));
    const problems: string[] = [];
    sets.forEach(({ name, set }, index) => {
      let ts: string;
      try {
        ts = verifyOffline(codeUrl, set as JsonWebKeySet).valid ? 'VALID' : 'invalid';
      } catch (error) {
        ts = `threw ${(error as Error).message}`;
      }
      const py = python[index]?.error ?? (python[index]?.valid ? 'VALID' : 'invalid');
      const run = runs[index] as ChildRun;
      if (ts !== py || (run.code !== 0 && run.code !== 1)) {
        problems.push(`${name}: verifyOffline ${ts}, Python ${py}, command exit ${run.code} ${run.stderr.trim().slice(0, 160)}`);
      }
    });
    expect(problems, 'key sets the TypeScript verifier does not judge like Python, or crashes on').toEqual([]);
  }, 60_000);
});
