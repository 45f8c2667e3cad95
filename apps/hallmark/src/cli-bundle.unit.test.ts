import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshCliBundle, manifestFile } from '../bin/cli-bundle.js';

// When `hallmark` runs its bundle (bin/cli-bundle.js) and when it runs the sources through tsx.
let root: string;
let folder: string;
const builtFrom = Date.parse('2026-12-02T10:00:00Z');
const before = new Date(builtFrom - 60_000);
const after = new Date(builtFrom + 1_000);

function source(path: string, changed: Date): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), '// source\n');
  utimesSync(join(root, path), changed, changed);
}

function manifest(contents: unknown): void {
  writeFileSync(join(folder, manifestFile), typeof contents === 'string' ? contents : JSON.stringify(contents));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hallmark-cli-bundle-'));
  folder = join(root, 'cache');
  mkdirSync(folder);
  writeFileSync(join(folder, 'cli.mjs'), '// bundle\n');
  source('apps/hallmark/src/cli.ts', before);
  source('packages/sql/src/index.ts', before);
  source('pnpm-lock.yaml', before);
  manifest({ builtFrom, inputs: ['apps/hallmark/src/cli.ts', 'packages/sql/src/index.ts', 'pnpm-lock.yaml'] });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the hallmark command runs its bundle', () => {
  it('while every file it was made from is older than the build', () => {
    expect(freshCliBundle(folder, root)).toBe(pathToFileURL(join(folder, 'cli.mjs')).href);
  });

  it('not once a source is edited after the build, a dependency is reinstalled or a source is deleted', () => {
    source('packages/sql/src/index.ts', after);
    expect(freshCliBundle(folder, root)).toBeUndefined();
    source('packages/sql/src/index.ts', before);
    source('pnpm-lock.yaml', after);
    expect(freshCliBundle(folder, root)).toBeUndefined();
    source('pnpm-lock.yaml', before);
    rmSync(join(root, 'apps/hallmark/src/cli.ts'));
    expect(freshCliBundle(folder, root)).toBeUndefined();
  });

  it('not when a source was changed in the build’s own millisecond (it may have been read before the change)', () => {
    source('apps/hallmark/src/cli.ts', new Date(builtFrom));
    expect(freshCliBundle(folder, root)).toBeUndefined();
  });

  it('not when there is no bundle, no manifest, or a manifest it cannot read', () => {
    rmSync(join(folder, 'cli.mjs'));
    expect(freshCliBundle(folder, root)).toBeUndefined();
    writeFileSync(join(folder, 'cli.mjs'), '// bundle\n');
    for (const broken of [
      '',
      '{"builtFrom":',
      '[]',
      { builtFrom: String(builtFrom), inputs: ['pnpm-lock.yaml'] },
      { builtFrom, inputs: [] },
    ]) {
      manifest(broken);
      expect(freshCliBundle(folder, root), JSON.stringify(broken)).toBeUndefined();
    }
    rmSync(join(folder, manifestFile));
    expect(freshCliBundle(folder, root)).toBeUndefined();
    expect(freshCliBundle(join(root, 'never-built'), root)).toBeUndefined();
  });
});
