// @hallmark/sdk as a package outside this workspace (scripts/build.ts): ESM JavaScript that plain
// Node runs (no tsx, no loader), and declaration files that a consumer's TypeScript, with no Node
// types, checks its calls against.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdk } from '../scripts/build.ts';

let folder: string;
let dist: string;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'hallmark-sdk-build-'));
  dist = join(folder, 'dist');
  buildSdk(dist);
  // A loopback API that knows one code and no other path.
  server = createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/api/v1/code/verify') {
      response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_ok' });
      response.end(JSON.stringify({ verdict: 'AUTHENTIC', confidence: 0.99, gtin: '09506000134352', serial: 'SN-1' }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req_missing' });
    response.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Nothing here.' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(() => {
  server?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('@hallmark/sdk built for use outside the workspace', () => {
  it('runs in plain Node as ESM: a call, and an error as its class with the request id', async () => {
    const index = pathToFileURL(join(dist, 'index.js')).href;
    const script = `
      import { Hallmark, NotFoundError } from ${JSON.stringify(index)};
      const hallmark = new Hallmark({ apiKey: 'svc_test_x', baseUrl: ${JSON.stringify(baseUrl)}, maxRetries: 0 });
      const verified = await hallmark.codes.verify({ url: 'https://example.com/01/09506000134352/21/SN-1' });
      let missing;
      try { await hallmark.codes.get({ assetId: 'code_nope' }); } catch (error) {
        missing = { isClass: error instanceof NotFoundError, code: error.code, status: error.status, requestId: error.requestId };
      }
      console.log(JSON.stringify({ verdict: verified.verdict, missing }));
    `;
    // Asynchronous (execFile), so this process's loopback server can answer the child.
    const child = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { cwd: folder, timeout: 30_000 },
        (error, stdout, stderr) => resolve({ status: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      verdict: 'AUTHENTIC',
      missing: { isClass: true, code: 'NOT_FOUND', status: 404, requestId: 'req_missing' },
    });
  });

  it('has declarations that a consumer without Node types checks its calls against', () => {
    const consumer = join(folder, 'consumer.ts');
    writeFileSync(
      consumer,
      `import { Hallmark, RateLimitedError, type paths } from './dist/index.js';
const hallmark = new Hallmark({ apiKey: 'svc_test_x', baseUrl: 'https://api.example.com', maxRetries: 3, timeout: 5_000 });
export async function check(): Promise<string> {
  const result = await hallmark.codes.verify({ url: 'https://example.com/01/09506000134352/21/SN-1' });
  const verdict: 'AUTHENTIC' | 'SUSPICIOUS' | 'COUNTERFEIT' = result.verdict;
  // @ts-expect-error: verify takes a url, not a link
  await hallmark.codes.verify({ link: 'x' });
  // @ts-expect-error: no such area
  hallmark.nothing.here();
  const error: unknown = new Error();
  if (error instanceof RateLimitedError) return String(error.status);
  type VerifyPath = keyof paths;
  const path: VerifyPath = '/api/v1/code/verify';
  return verdict + path;
}
`,
    );
    const program = ts.createProgram({
      rootNames: [consumer],
      options: {
        target: ts.ScriptTarget.ES2022,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        noEmit: true,
        types: [],
      },
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((problem) => ts.flattenDiagnosticMessageText(problem.messageText, '\n'));
    expect(problems).toEqual([]);
    // The declarations are what was checked, not the sources.
    expect(program.getSourceFiles().some((file) => file.fileName.endsWith('/dist/client.d.ts'))).toBe(true);
    expect(program.getSourceFiles().some((file) => file.fileName.includes('/packages/sdk/src/'))).toBe(false);
  });
});
