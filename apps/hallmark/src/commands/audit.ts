import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { auditExportText, type ComplianceExportDocument, firstRepeatedMember, type JsonWebKeySet } from '@hallmark/client';
import { UsageError } from './usage-error.ts';

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} from ${path}: ${(error as Error).message}`);
  }
}

function parseJson<T>(text: string, path: string, what: string): T {
  try {
    return JSON.parse(text) as T;
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
  const keySetText = await readText(values.jwks, 'a key set');
  const jwks = parseJson<JsonWebKeySet | null>(keySetText, values.jwks, 'a key set');
  if (!isObject(jwks) || !Array.isArray(jwks.keys)) throw new UsageError(`${values.jwks} is not a JWKS (no "keys" array)`);
  // A key set that names a member twice says two things (JSON.parse keeps the last): not one to trust.
  const repeatedInKeys = firstRepeatedMember(keySetText);
  if (repeatedInKeys !== undefined) {
    throw new UsageError(`${values.jwks} names the member ${JSON.stringify(repeatedInKeys).slice(0, 100)} twice in one object`);
  }
  const exportText = await readText(file, 'an export');
  const document = parseJson<ComplianceExportDocument | null>(exportText, file, 'an export');
  if (!isObject(document) || !Array.isArray(document.events)) {
    throw new UsageError(`${file} is not a JSON compliance export (no "events" array)`);
  }
  // From the text: an export that names a member twice is invalid (auditExportText).
  const report = auditExportText(exportText, jwks, { document });
  out(`${JSON.stringify(report, null, 2)}\n`);
  return report.valid ? 0 : 1;
}
