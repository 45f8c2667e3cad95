import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../scripts/generate.ts';

// CI regenerates the SDK's types from the OpenAPI document and fails on any difference: a route added
// or changed in packages/contracts without `pnpm gen:sdk` fails here.
describe('the generated files', () => {
  it('are what `pnpm gen:sdk` makes from the current OpenAPI document', async () => {
    const files = await generatedFiles();
    expect(Object.keys(files)).toHaveLength(2);
    for (const [file, fresh] of Object.entries(files)) {
      const committed = readFileSync(file, 'utf8');
      const name = relative(process.cwd(), file);
      if (committed !== fresh) {
        const line = committed.split('\n').findIndex((text, index) => text !== fresh.split('\n')[index]) + 1;
        expect.fail(
          `${name} is out of date with the OpenAPI document (first difference at line ${line}). ` +
            'Run `pnpm gen:sdk` and commit the result; a new operation also needs its method in packages/sdk/src/operation-names.ts.',
        );
      }
    }
  }, 60_000);
});
