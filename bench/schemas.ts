// Metadata validation (issue #5): validations per second of a 20-field schema, in-process (the
// compiled validator alone) and through POST /schemas/{id}/validate in the embedded form, side by side.
//
//   pnpm bench:schemas
import { compileMetadataSchema, type FieldDefinition } from '@hallmark/schemas';
import { machineLine, measure, operatorKey, startEmbeddedProduct } from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const types = ['string', 'number', 'integer', 'boolean', 'date'] as const;
const fields: FieldDefinition[] = Array.from({ length: 20 }, (_, i) => ({
  name: `field${i}`,
  type: types[i % types.length] as FieldDefinition['type'],
  required: i < 10,
}));
const sample = (i: number) => ['text', 1.5, 42, true, '2026-11-21'][i % types.length];
const data = Object.fromEntries(fields.map((field, i) => [field.name, sample(i)]));

const validator = compileMetadataSchema({ fields });
if (!validator.validate(data).isValid) throw new Error('the sample does not match its schema');
for (let i = 0; i < 10_000; i++) validator.validate(data);
const started = performance.now();
let count = 0;
while (performance.now() - started < 3_000) {
  validator.validate(data);
  count++;
}
const inProcess = Math.round(count / ((performance.now() - started) / 1000));

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const product = await startEmbeddedProduct();
let line: string;
try {
  const post = async (path: string, key: string, body: unknown) =>
    (await (
      await fetch(`${product.url}/api/v1${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as Json;
  const key = (await post('/accounts', operatorKey, { name: 'Schema bench', tier: 'enterprise' })).apiKey.secret as string;
  const schema = await post('/schemas', key, { name: 'Twenty fields', vertical: 'bench', fields });
  const load = {
    url: `${product.url}/api/v1/schemas/${schema.id}/validate`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(data),
  };
  await measure({ ...load, seconds: 3 });
  const result = await measure({ ...load, seconds });
  line = `| POST /schemas/{id}/validate, embedded, 50 connections | ${result.requestsPerSecond}/s | ${result.p50} | ${result.p99} | ${result.errors} |`;
} finally {
  await product.stop();
}
process.stdout.write(
  [
    `Metadata validation, 20-field schema, ${machineLine()}`,
    '',
    '| measurement | validations/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    `| in-process, compiled validator (Ajv), one core | ${inProcess}/s | | | |`,
    line,
    '',
  ].join('\n'),
);
