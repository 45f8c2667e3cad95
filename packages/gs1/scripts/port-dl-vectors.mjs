#!/usr/bin/env node
// Ports the Digital Link test vectors of the GS1 Barcode Syntax Engine (Apache-2.0) into a JSON
// fixture: the inputs and expected outcomes only, read out of the engine's unit tests.
//
//   node packages/gs1/scripts/port-dl-vectors.mjs <checkout of gs1-syntax-engine> <commit>
//   npx biome check --write packages/gs1/src/fixtures/gs1-syntax-engine-dl-vectors.json
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [root, commit] = process.argv.slice(2);
if (!root || !commit) throw new Error('usage: port-dl-vectors.mjs <gs1-syntax-engine checkout> <commit>');
const dl = readFileSync(join(root, 'src/c-lib/dl.c'), 'utf8');
const encoders = readFileSync(join(root, 'src/c-lib/gs1encoders.c'), 'utf8');
const lineOf = (text, index) => text.slice(0, index).split('\n').length;
const cString = (s) => JSON.parse(`"${s.replace(/" "/g, '').replace(/\\x([0-9A-Fa-f]{2})/g, '\\u00$1')}"`);
const section = (text, start) => text.slice(text.indexOf(start), text.indexOf('\n}\n', text.indexOf(start)));

// test_dl_parseDLuri: test_parseDLuri(valid, "uri", "element string"), tracking the option switches between them.
const parse = [];
{
  const body = section(dl, 'void test_dl_parseDLuri(void)');
  const offset = dl.indexOf('void test_dl_parseDLuri(void)');
  const options = {};
  const events =
    /test_parseDLuri\(\s*(true|false)\s*,\s*(?:\/\/[^\n]*\n\s*)?"((?:[^"\\]|\\.)*)"\s*,\s*(?:\/\/[^\n]*\n\s*)?"((?:[^"\\]|\\.)*)"\s*\)|setPermitZeroSuppressedGTINinDLuris\(ctx, (true|false)\)|permitConvenienceAlphas = (true|false)|setPermitUnknownAIs\(ctx, (true|false)\)|vUNKNOWN_AI_NOT_DL_ATTR, (true|false)\)/g;
  for (const m of body.matchAll(events)) {
    if (m[1]) {
      parse.push({
        source: `src/c-lib/dl.c:${lineOf(dl, offset + m.index)}`,
        valid: m[1] === 'true',
        uri: cString(m[2]),
        ...(m[1] === 'true' ? { elementString: cString(m[3]) } : {}),
        ...(Object.keys(options).length ? { options: { ...options } } : {}),
      });
    } else if (m[4]) m[4] === 'true' ? (options.permitZeroSuppressedGtin = true) : delete options.permitZeroSuppressedGtin;
    else if (m[5]) m[5] === 'true' ? (options.permitConvenienceAlphas = true) : delete options.permitConvenienceAlphas;
    else if (m[6]) m[6] === 'true' ? (options.permitUnknownAIs = true) : delete options.permitUnknownAIs;
    else if (m[7]) m[7] === 'false' ? (options.permitUnknownAIsAsAttributes = true) : delete options.permitUnknownAIsAsAttributes;
  }
  // The two vectors the engine builds in a loop, written out.
  const line = (needle) => `src/c-lib/dl.c:${lineOf(dl, dl.indexOf(needle))}`;
  const a90 = 'A'.repeat(90);
  parse.push({ source: line('Exactly 90 chars'), valid: true, uri: `https://a/01/12312312312333?99=${a90}`, elementString: `^011231231231233399${a90}` });
  parse.push({ source: line('91 chars, too long'), valid: false, uri: `https://a/01/12312312312333?99=${a90}A` });
  const many = Array.from({ length: 64 }, (_, j) => `99=${String.fromCharCode(65 + Math.floor(j / 26))}${String.fromCharCode(65 + (j % 26))}`);
  parse.push({ source: line('MAX_AIS boundary in query'), valid: false, uri: `https://a/01/12312312312333?${many.join('&')}` });
}

// test_dl_testValidateDLpathAIseq: every listed sequence is a valid key and qualifiers.
const pathSequences = [...section(dl, 'void test_dl_testValidateDLpathAIseq(void)').matchAll(/\{ ((?:"\d+"(?:, )?)+) \}/g)].map((m) =>
  [...m[1].matchAll(/"(\d+)"/g)].map((x) => x[1]),
);

// test_dl_URIunescape and test_dl_URIescape: input, path form, query form.
const pairs = (name, macro) =>
  [...section(dl, name).matchAll(new RegExp(`${macro}\\("((?:[^"\\\\]|\\\\.)*)",\\s*"((?:[^"\\\\]|\\\\.|" ")*)",\\s*"((?:[^"\\\\]|\\\\.|" ")*)"\\)`, 'g'))].map(
    (m) => ({ in: cString(m[1]), path: cString(m[2].replace(/" "/g, '')), query: cString(m[3]) }),
  );
const unescape = pairs('void test_dl_URIunescape(void)', 'test_URIunescape');
unescape.push({ in: 'A%00B', path: null, query: null });
const escape = pairs('void test_dl_URIescape(void)', 'test_URIescape');

// test_dl_generateDLuri: the URIs the engine writes must read back as the same AIs.
const generated = [];
{
  const offset = dl.indexOf('void test_dl_generateDLuri(void)');
  const body = section(dl, 'void test_dl_generateDLuri(void)');
  for (const m of body.matchAll(/test_testGenerateDLuri\(true, "[^"]*", "((?:[^"\\]|\\.)*)", ?"((?:[^"\\]|\\.)*)"\)/g)) {
    if (m.index > body.indexOf('setPermitUnknownAIs(ctx, true)') && m.index < body.indexOf('setPermitUnknownAIs(ctx, false)')) continue;
    generated.push({ source: `src/c-lib/dl.c:${lineOf(dl, offset + m.index)}`, aiData: cString(m[1]), uri: cString(m[2]) });
  }
  generated.push({ source: `src/c-lib/dl.c:${lineOf(dl, dl.indexOf('/235/ABC?10=DEF"') )}`, aiData: '(01)12312312312326(235)ABC(10)DEF', uri: 'https://example.com/01/12312312312326/235/ABC?10=DEF' });
}

// gs1encoders.c: gs1_encoder_setDataStr given a URI (the public API, which also checks AI pairings).
const setDataStr = [];
for (const m of encoders.matchAll(/TEST_(?:ASSERT|CHECK)\((!?)gs1_encoder_setDataStr\(ctx, "(https?:\/\/[^"]*)"\)\)/g)) {
  const uri = cString(m[2]);
  const vector = { source: `src/c-lib/gs1encoders.c:${lineOf(encoders, m.index)}`, valid: m[1] !== '!', uri };
  if (/[?&]8[89]=/.test(uri)) vector.options = { permitUnknownAIs: true, permitUnknownAIsAsAttributes: true };
  setDataStr.push(vector);
}

const fixture = {
  source: {
    repository: 'https://github.com/gs1/gs1-syntax-engine',
    commit,
    files: ['src/c-lib/dl.c (UNIT_TESTS section)', 'src/c-lib/gs1encoders.c (UNIT_TESTS section)'],
    licence: 'Apache-2.0 (Copyright (c) 2021-2026 GS1 AISBL), http://www.apache.org/licenses/LICENSE-2.0',
    note: 'Test data only, ported by packages/gs1/scripts/port-dl-vectors.mjs; options name the engine settings a vector runs under.',
  },
  parse,
  setDataStr,
  pathSequences,
  generated,
  unescape,
  escape,
};
const target = join(dirname(fileURLToPath(import.meta.url)), '../src/fixtures/gs1-syntax-engine-dl-vectors.json');
writeFileSync(target, `${JSON.stringify(fixture, null, 2)}\n`);

// The linters' own tests (src/c-lib/syntax/lint_*.c): data given as a C string literal, pass or fail.
// The coupon linters are left out: Hallmark does not check coupon structure (docs/SIGNING.md).
const { readdirSync } = await import('node:fs');
const linters = {};
for (const file of readdirSync(join(root, 'src/c-lib/syntax')).filter((f) => /^lint_[a-z0-9]+\.c$/.test(f)).sort()) {
  // Tests that need a custom lookup compiled in (GS1_LINTER_CUSTOM_*) are not the default engine's.
  const source = readFileSync(join(root, 'src/c-lib/syntax', file), 'utf8').replace(/#if[^\n]*CUSTOM[\s\S]*?#endif/g, '');
  for (const m of source.matchAll(/UNIT_TEST_(PASS|FAIL)\(gs1_lint_([a-z0-9]+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)/g)) {
    if (m[2].startsWith('coupon')) continue;
    const data = [...m[3].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((l) => cString(l[1])).join('');
    (linters[m[2]] ??= { pass: [], fail: [] })[m[1] === 'PASS' ? 'pass' : 'fail'].push(data);
  }
}
const linterTarget = join(dirname(fileURLToPath(import.meta.url)), '../src/fixtures/gs1-syntax-engine-linter-vectors.json');
writeFileSync(
  linterTarget,
  `${JSON.stringify({ source: { ...fixture.source, files: ['src/c-lib/syntax/lint_*.c (UNIT_TESTS sections; couponcode and couponposoffer left out)'] }, linters }, null, 1)}\n`,
);
console.log(`linters ${Object.keys(linters).length}, vectors ${Object.values(linters).reduce((n, l) => n + l.pass.length + l.fail.length, 0)}`);
console.log(`parse ${parse.length}, setDataStr ${setDataStr.length}, pathSequences ${pathSequences.length}, generated ${generated.length}, unescape ${unescape.length}, escape ${escape.length}`);
