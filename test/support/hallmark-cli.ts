import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const hallmarkBin = fileURLToPath(new URL('../../apps/hallmark/bin/hallmark.js', import.meta.url));

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `hallmark <args>` as a child process in `dataDir` (its working folder and HALLMARK_DATA_DIR), with
 * only PATH and `env` from the environment: its exit code and both outputs, whether it failed or not.
 */
export async function runHallmark(dataDir: string, env: Record<string, string>, args: readonly string[]): Promise<CliOutcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [hallmarkBin, ...args], {
      cwd: dataDir,
      env: { PATH: process.env.PATH ?? '', HALLMARK_DATA_DIR: dataDir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CliOutcome;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
