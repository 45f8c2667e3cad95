/**
 * `pnpm lint:openapi`: writes the OpenAPI document the gateway serves (built from
 * @hallmark/contracts' routes) to a temporary file and lints it with Redocly CLI under the
 * committed redocly.yaml. Exits with the linter's status: any error fails CI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hallmarkOpenApiDocument, routes } from '@hallmark/contracts';

// The served document names the gateway's HALLMARK_PUBLIC_URL as its server; a reserved name stands in for it.
const origin = 'https://gateway.hallmark.invalid';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const directory = mkdtempSync(join(tmpdir(), 'hallmark-openapi-'));
const file = join(directory, 'openapi.json');
try {
  writeFileSync(file, `${JSON.stringify(hallmarkOpenApiDocument(routes, origin), null, 2)}\n`);
  const result = spawnSync(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['lint', file, '--config', join(root, 'redocly.yaml'), '--max-problems', '200'],
    { stdio: 'inherit', cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  );
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(directory, { recursive: true, force: true });
}
