import { open, rename, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { exportFormats } from '@hallmark/contracts';
import { createProgress, type Progress } from '../progress.ts';
import { CommandError } from './command-error.ts';
import type { CommandIo } from './command-io.ts';
import { connectProduct } from './product-api.ts';
import { UsageError } from './usage-error.ts';

type ExportFormat = (typeof exportFormats)[number];

/** The tree size the gateway puts in the export's file name (`<assetId>-<treeSize>.json`), for the bar's total. */
function treeSizeOf(response: Response): number | undefined {
  const match = /-(\d+)\.[a-z]+"?\s*$/i.exec(response.headers.get('content-disposition') ?? '');
  return match ? Number(match[1]) : undefined;
}

interface Written {
  bytes: number;
  treeSize: number | undefined;
  /** A failure to write the file here (a full disk): the command's error, not the server's; no attempt follows it. */
  localError?: Error;
}

/** Runs a write to the local file, keeping its failure as the command's own (the SDK would read any throw as "no answer"). */
async function locally<T>(written: Written, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    written.localError ??= error as Error;
    throw error;
  }
}

/**
 * A fetch for the SDK that writes a successful answer's body to `path` as it arrives (the SDK
 * reads a whole answer into memory and parses it as JSON, which an export of 100,000 events or a
 * CSV one cannot be), and hands the SDK an empty answer in its place. Error answers pass through,
 * so the SDK still maps them to its error classes, and a retry of the SDK starts the file over.
 */
function fetchWritingTo(path: string, progress: Progress, written: Written): typeof fetch {
  return async (input, init) => {
    if (written.localError) throw written.localError; // a retry of the SDK would only fail here again
    const response = await fetch(input, init);
    if (!response.ok || !response.body) return response;
    written.bytes = 0;
    written.treeSize = treeSizeOf(response);
    if (written.treeSize !== undefined) progress.setTotal(written.treeSize);
    const file = await locally(written, () => open(path, 'w'));
    let counted = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        await locally(written, () => file.write(chunk));
        written.bytes += chunk.byteLength;
        // One event a line in every format: the line breaks are the bar's measure (an estimate, capped at the total).
        let breaks = 0;
        for (const byte of chunk) if (byte === 0x0a) breaks++;
        const next = Math.min(counted + breaks, written.treeSize ?? Number.POSITIVE_INFINITY);
        progress.advance(next - counted);
        counted = next;
      }
    } finally {
      await file.close();
    }
    return new Response(null, { status: response.status, headers: response.headers });
  };
}

/**
 * `hallmark compliance export <assetId> --out <file>`: GET /compliance/{assetId}/export through the
 * SDK, streamed to `<file>.partial` and renamed to `<file>` once whole. Resolves with the exit code.
 */
export async function complianceCommand(args: string[], env: NodeJS.ProcessEnv, io: CommandIo): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'export') throw new UsageError(`unknown compliance action "${action ?? ''}" (compliance export)`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
      url: { type: 'string' },
      key: { type: 'string' },
    },
  });
  const [assetId] = positionals;
  if (!assetId || positionals.length > 1) throw new UsageError('give exactly one asset id (or code id) to export');
  if (!values.out) throw new UsageError('--out <file> is required');
  const format = values.format as ExportFormat | undefined;
  if (format !== undefined && !exportFormats.includes(format)) {
    throw new UsageError(`--format must be one of ${exportFormats.join(', ')}`);
  }
  const partial = `${values.out}.partial`;
  // A file that cannot be written (a folder that does not exist, no permission) is a bad --out,
  // said before anything is asked of the server.
  try {
    await (await open(partial, 'w')).close();
    await rm(partial, { force: true });
  } catch (error) {
    throw new UsageError(
      `--out ${values.out}: cannot write ${partial} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const api = await connectProduct(values, env, 'tenant');
  const written: Written = { bytes: 0, treeSize: undefined };
  const progress = createProgress({ label: 'exporting', unit: 'events', stream: io.terminal });
  try {
    // A long history streams for minutes: each attempt may take 30 of them.
    const client = api.clientWith({ fetch: fetchWritingTo(partial, progress, written), timeout: 30 * 60_000 });
    await client.compliance.export({ assetId, ...(format ? { format } : {}) });
    await rename(partial, values.out);
  } catch (error) {
    await rm(partial, { force: true });
    if (written.localError) throw new CommandError(`could not write ${partial}: ${written.localError.message}`);
    throw error;
  } finally {
    progress.finish();
  }
  const summary = { assetId, treeSize: written.treeSize ?? null, bytes: written.bytes, out: values.out };
  io.out(
    values.json
      ? `${JSON.stringify(summary)}\n`
      : `exported ${assetId} (tree size ${summary.treeSize ?? 'unknown'}, ${written.bytes} bytes) to ${values.out}\n`,
  );
  return 0;
}
