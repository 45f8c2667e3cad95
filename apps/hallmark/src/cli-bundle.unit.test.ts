import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliBundleManifest, freshCliBundle, manifestFile } from '../bin/cli-bundle.js';

// When `hallmark` runs its bundle (bin/cli-bundle.js) and when it runs the sources through tsx.
let root: string;
let folder: string;
const built = new Date('2026-12-02T10:00:00Z');
const inputPaths = ['apps/hallmark/src/cli.ts', 'packages/sql/src/index.ts', 'packages/sql/package.json', 'pnpm-lock.yaml'];

function source(path: string, contents = '// source\n', changed = built): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), contents);
  utimesSync(join(root, path), changed, changed);
}

function manifestOf(overrides: Partial<CliBundleManifest> = {}): CliBundleManifest {
  const inputs = inputPaths.map((path): [string, number, number] => {
    const stats = statSync(join(root, path));
    return [path, stats.mtimeMs, stats.size];
  });
  return { build: '1-1', root, inputs, ...overrides };
}

function manifest(contents: unknown): void {
  writeFileSync(join(folder, manifestFile), typeof contents === 'string' ? contents : JSON.stringify(contents));
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hallmark-cli-bundle-'));
  folder = join(root, 'cache');
  mkdirSync(join(folder, 'builds', '1-1'), { recursive: true });
  writeFileSync(join(folder, 'builds', '1-1', 'cli.mjs'), '// bundle\n');
  for (const path of inputPaths) source(path);
  manifest(manifestOf());
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the hallmark command runs its bundle', () => {
  it('while every file it was made from is as it was then', () => {
    expect(freshCliBundle(folder, root)).toBe(pathToFileURL(join(folder, 'builds', '1-1', 'cli.mjs')).href);
  });

  it('not once a source is edited, a package.json or the lockfile changes, or a source is deleted', () => {
    source('packages/sql/src/index.ts', '// edited\n', new Date(built.getTime() + 60_000));
    expect(freshCliBundle(folder, root)).toBeUndefined();
    source('packages/sql/src/index.ts');
    expect(freshCliBundle(folder, root)).toBeDefined();
    source('packages/sql/package.json', '{"exports":{}}\n');
    expect(freshCliBundle(folder, root)).toBeUndefined();
    source('packages/sql/package.json');
    source('pnpm-lock.yaml', 'lockfileVersion: 9\n');
    expect(freshCliBundle(folder, root)).toBeUndefined();
    source('pnpm-lock.yaml');
    rmSync(join(root, 'apps/hallmark/src/cli.ts'));
    expect(freshCliBundle(folder, root)).toBeUndefined();
  });

  it('not when a file is replaced by one with an older time (a copy that keeps times, a clock behind)', () => {
    source('apps/hallmark/src/cli.ts', '// source\n', new Date(built.getTime() - 86_400_000));
    expect(freshCliBundle(folder, root)).toBeUndefined();
  });

  it('not from a checkout moved elsewhere, whose bundle imports the old place', () => {
    manifest(manifestOf({ root: '/somewhere/else' }));
    expect(freshCliBundle(folder, root)).toBeUndefined();
  });

  it('not when there is no bundle, no manifest, or a manifest it cannot read', () => {
    rmSync(join(folder, 'builds', '1-1', 'cli.mjs'));
    expect(freshCliBundle(folder, root)).toBeUndefined();
    writeFileSync(join(folder, 'builds', '1-1', 'cli.mjs'), '// bundle\n');
    for (const broken of ['', '{"build":', '[]', manifestOf({ inputs: [] }), manifestOf({ build: '../../elsewhere' })]) {
      manifest(broken);
      expect(freshCliBundle(folder, root), JSON.stringify(broken)).toBeUndefined();
    }
    rmSync(join(folder, manifestFile));
    expect(freshCliBundle(folder, root)).toBeUndefined();
    expect(freshCliBundle(join(root, 'never-built'), root)).toBeUndefined();
  });
});
