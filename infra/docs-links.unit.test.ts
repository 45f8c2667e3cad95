// The docs stand on their own for someone who clones only this repository: every relative link and
// every repository path a markdown file names must exist here, and nothing may point outside it
// (the interface spec and the product decisions are described in docs/INTERFACE.md).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { errorCodes } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const skippedFolders = new Set(['node_modules', 'dist', 'coverage', 'test-artifacts', '__pycache__']);

function markdownFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) {
      // Hidden folders are tools' caches (.git, .pytest_cache, .hallmark), not docs.
      return skippedFolders.has(entry.name) || entry.name.startsWith('.') ? [] : markdownFiles(join(folder, entry.name));
    }
    return entry.name.endsWith('.md') ? [join(folder, entry.name)] : [];
  });
}

/** Markdown link targets: inline `[text](target)` and reference definitions `[label]: target`. */
function linkTargets(text: string): string[] {
  const withoutFences = text.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  const inline = [...withoutFences.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] as string);
  const references = [...withoutFences.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] as string);
  return [...inline, ...references];
}

/** A target inside this repository: not a URL, a mail address or a fragment of the same page. */
function isRelative(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#') && !target.startsWith('//');
}

const topFolders = ['packages', 'services', 'apps', 'infra', 'test', 'bench', 'docs', 'clients'];

/**
 * Repository paths written in code spans or plain text (`packages/crypto/src/ed25519.ts`,
 * docs/AUCTION.md), read from the repository's root. Patterns (`services/<name>`, `hostile-*.ts`,
 * `{a,b}`, `…`) and build output (`dist/`) are not paths of a file.
 */
function repositoryPaths(text: string): string[] {
  const pattern = new RegExp(`(?<![\\w./-])(?:${topFolders.join('|')})/[^\\s\`'"()\\[\\],;:]*`, 'g');
  return [...text.matchAll(pattern)]
    .map((match) => match[0].replace(/#.*$/, '').replace(/[.]+$/, ''))
    .filter((path) => !/[<>{}*…|$]/.test(path) && !/\/dist(\/|$)/.test(path));
}

/** Places outside this repository that a reader of a clone cannot follow. */
const outsideReferences = [
  /\.\.\/shared\b/,
  /\/work\/shared\b/,
  /\binterface-spec\.md\b/,
  /\bDECISIONS\.md\b/,
  /\bperf-ceilings(\.md)?\b/,
  /\bSTYLE\.md\b/,
];

const files = markdownFiles(root);

describe('docs stand on their own', () => {
  it('finds the markdown files', () => {
    expect(files.map((file) => relative(root, file))).toEqual(expect.arrayContaining(['README.md', 'docs/ARCHITECTURE.md']));
  });

  it('links only to files that exist in the repository', () => {
    const broken = files.flatMap((file) =>
      linkTargets(readFileSync(file, 'utf8'))
        .filter(isRelative)
        .map((target) => decodeURIComponent(target.replace(/[#?].*$/, '')))
        .filter((target) => target !== '' && !existsSync(resolve(dirname(file), target)))
        .map((target) => `${relative(root, file)} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const missing = files.flatMap((file) =>
      [...new Set(repositoryPaths(readFileSync(file, 'utf8')))]
        .filter((path) => !existsSync(join(root, path)))
        .map((path) => `${relative(root, file)} → ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('points nowhere outside the repository (../shared, the spec files by name)', () => {
    const outside = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          outsideReferences.some((pattern) => pattern.test(line)) ? [`${relative(root, file)}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(outside).toEqual([]);
  });

  it('describes every error code the API answers with in docs/INTERFACE.md', () => {
    const interfacePage = readFileSync(join(root, 'docs/INTERFACE.md'), 'utf8');
    expect(errorCodes.filter((code) => !interfacePage.includes(`\`${code}\``))).toEqual([]);
  });

  it('catches what it is meant to catch', () => {
    expect(linkTargets('see [the API](docs/API.md#limits)\n[x]: ../shared/spec.md\n```\n[no](inside-a-fence.md)\n```')).toEqual([
      'docs/API.md#limits',
      '../shared/spec.md',
    ]);
    expect(linkTargets('[site](https://example.com) [top](#top)').filter(isRelative)).toEqual([]);
    expect(
      repositoryPaths('`packages/crypto/src/ed25519.ts`, docs/AUCTION.md. and services/<name>/src, `apps/hallmark/dist/cli.js`'),
    ).toEqual(['packages/crypto/src/ed25519.ts', 'docs/AUCTION.md']);
    expect(outsideReferences.some((pattern) => pattern.test('as `../shared/spec/DECISIONS.md` says'))).toBe(true);
  });
});
