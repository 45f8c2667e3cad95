import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { auditExport, type ComplianceExportDocument, type JsonWebKeySet } from '@hallmark/client';
import { UsageError } from './usage-error.ts';

async function readJson<T>(path: string, what: string): Promise<T> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    throw new UsageError(`cannot read ${what} from ${path}: ${(error as Error).message}`);
  }
}

/** A JSON object (`null` and arrays are not: a file of `null` threw a TypeError here, exit 70). */
const isObject = <T>(value: T | null): value is T => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Resolves with the exit code. */
export async function auditCommand(args: string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { jwks: { type: 'string' } } });
  if (!values.jwks) throw new UsageError('--jwks <file> is required');
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('give exactly one export file');
  const jwks = await readJson<JsonWebKeySet | null>(values.jwks, 'a key set');
  if (!isObject(jwks) || !Array.isArray(jwks.keys)) throw new UsageError(`${values.jwks} is not a JWKS (no "keys" array)`);
  const document = await readJson<ComplianceExportDocument | null>(file, 'an export');
  if (!isObject(document) || !Array.isArray(document.events)) {
    throw new UsageError(`${file} is not a JSON compliance export (no "events" array)`);
  }
  const report = auditExport(document, jwks);
  out(`${JSON.stringify(report, null, 2)}\n`);
  return report.valid ? 0 : 1;
}
