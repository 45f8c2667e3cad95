import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditExportText, type JsonWebKeySet } from '@hallmark/client';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const cliPath = join(repo, 'apps/hallmark/bin/hallmark.js');
const python = '/usr/bin/python3';

/** Prints Python's `audit_export` report of an export file (argv 1) under a key set file (argv 2). */
const pythonAudit = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(repo, 'clients/python'))})
from hallmark.offline import audit_export
with open(sys.argv[2], encoding="utf-8") as f:
    jwks = json.load(f)
with open(sys.argv[1], encoding="utf-8") as f:
    report = audit_export(f.read(), jwks)
print(json.dumps({"valid": report.valid, "problems": report.problems}))
`;

/** What each offline auditor says of one export: valid or not (the command: its exit code; Python: its report's `valid`, or why it gave none). */
export interface AuditVerdicts {
  ts: boolean;
  command: number | null;
  python: boolean | string;
}

/**
 * The three offline auditors' verdicts on an export file's text, as an auditor holding the file gets
 * them: `auditExportText` (TypeScript), `hallmark audit` and Python's `audit_export` (each a child
 * process, under a hard timeout). The text is written to a file in `folder`.
 */
export async function auditVerdicts(
  text: string,
  keys: { jwks: JsonWebKeySet; jwksPath: string },
  folder: string,
): Promise<AuditVerdicts> {
  const path = join(folder, `export-${randomUUID()}.json`);
  await writeFile(path, text);
  const command = await runChild(
    process.execPath,
    ['--max-old-space-size=1024', cliPath, 'audit', path, '--jwks', keys.jwksPath],
    30_000,
  );
  const py = await runChild(python, ['-c', pythonAudit, path, keys.jwksPath], 30_000);
  let pythonValid: boolean | string;
  try {
    pythonValid = (JSON.parse(py.stdout) as { valid: boolean }).valid;
  } catch {
    pythonValid = `no report: ${py.stderr.slice(0, 300)}`;
  }
  return { ts: auditExportText(text, keys.jwks).valid, command: command.code, python: pythonValid };
}

/** Runs a child with a hard timeout; resolves with its exit code and (bounded) output. */
function runChild(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.HALLMARK_DEBUG;
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < 1_000_000) stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 100_000) stderr += chunk.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
