// Builds @hallmark/sdk for use outside this workspace: ESM JavaScript with declaration files
// (packages/sdk/dist/*.js, *.d.ts) from src/index.ts and what it imports, checked against the DOM's
// and ES2023's types only: no Node types, so the declarations hold for Node 20 and browsers alike.
// The published package points at dist (package.json's publishConfig); in this workspace the
// sources are used directly. `@hallmark/sdk/offline` (Node only, on @hallmark/client) is not part
// of it.
//
//   pnpm --filter @hallmark/sdk build          (or: tsx packages/sdk/scripts/build.ts [outDir])
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const sdkRoot = fileURLToPath(new URL('..', import.meta.url));

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => sdkRoot,
  getNewLine: () => '\n',
};

/**
 * Compiles the SDK into `outDir`; the files written, or an error with the compiler's diagnostics.
 * It writes over what is there and removes nothing: `pnpm build` (infra/build.ts) has just put the
 * whole package's JavaScript, `offline.js` included, in the same dist/, which production uses.
 */
export function buildSdk(outDir = `${sdkRoot}dist`): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    declaration: true,
    skipLibCheck: true,
    types: [],
    rootDir: `${sdkRoot}src`,
    outDir,
  };
  const program = ts.createProgram({ rootNames: [`${sdkRoot}src/index.ts`], options });
  const written: string[] = [];
  const result = program.emit(undefined, (fileName, text) => {
    ts.sys.writeFile(fileName, text);
    written.push(fileName);
  });
  const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (problems.length > 0) throw new Error(ts.formatDiagnostics(problems, formatHost));
  // ESM to Node whatever package.json is beside it (Node 20 before 20.19 reads .js as CommonJS otherwise).
  const marker = join(outDir, 'package.json');
  if (!existsSync(marker)) {
    writeFileSync(marker, '{ "type": "module" }\n');
    written.push(marker);
  }
  return written;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const written = buildSdk(process.argv[2]);
  console.log(`@hallmark/sdk: ${written.length} files in ${process.argv[2] ?? `${sdkRoot}dist`}`);
}
