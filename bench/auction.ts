// Auction objects (issue #7), in the embedded form over HTTP: registrations per second, photo
// uploads per second for 2 MB images (decoded and analysed each time), public verifications per
// second of an object with four bound photos.
//
//   pnpm bench:auction
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { machineLine, measure, operatorKey, startEmbeddedProduct } from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

/** A noisy photo of about 2 MB as PNG: every upload is a full decode. */
async function twoMegabytePhoto(): Promise<Buffer> {
  const side = 820;
  // Random pixels do not compress: 820 × 820 × 3 bytes is about 2 MB as PNG.
  const pixels = randomBytes(side * side * 3);
  return sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

const product = await startEmbeddedProduct({ HALLMARK_BOOTSTRAP_KEY: operatorKey, HALLMARK_PUBLIC_RATE_LIMIT: '100000' });
const lines: string[] = [];
try {
  const headers = { 'x-api-key': operatorKey, 'content-type': 'application/json' };
  const register = async (title: string) =>
    (await (
      await fetch(`${product.url}/api/v1/auction/objects/register`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title, category: 'watch' }),
      })
    ).json()) as Json;
  const upload = async (objectId: string, angle: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('angle', angle);
    form.append('photo', new Blob([bytes], { type: 'image/png' }), 'photo.png');
    const response = await fetch(`${product.url}/api/v1/auction/objects/${objectId}/photos`, {
      method: 'POST',
      headers: { 'x-api-key': operatorKey },
      body: form,
    });
    if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  };

  const registration = await measure({
    url: `${product.url}/api/v1/auction/objects/register`,
    method: 'POST',
    headers,
    body: JSON.stringify({ title: 'Bench watch', category: 'watch' }),
    connections: 10,
    seconds,
    pid: product.pid,
  });
  lines.push(
    `registrations: ${registration.requestsPerSecond}/s, p50 ${registration.p50} ms, p99 ${registration.p99} ms, errors ${registration.errors}`,
  );

  const photos = await Promise.all([1, 2, 3, 4].map(() => twoMegabytePhoto()));
  const sizes = photos.map((photo) => (photo.length / 1_048_576).toFixed(1));
  const target = await register('Photo bench');
  const angles = ['dial', 'movement', 'serial_engraving', 'case_back'];
  let uploads = 0;
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    [0, 1, 2, 3].map(async (worker) => {
      while (performance.now() < until) {
        const started = performance.now();
        await upload(target.object.id, angles[worker] as string, photos[worker] as Buffer);
        latencies.push(performance.now() - started);
        uploads += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  lines.push(
    `photo uploads (${sizes.join(', ')} MB PNG, 4 in flight): ${(uploads / seconds).toFixed(1)}/s, ` +
      `p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(0)} ms, p99 ${latencies[Math.floor(latencies.length * 0.99)]?.toFixed(0)} ms`,
  );

  const serial = target.object.service_serial as string;
  const verification = await measure({
    url: `${product.url}/api/v1/auction/public/verify/${serial}`,
    connections: 20,
    seconds,
    pid: product.pid,
  });
  lines.push(
    `public verifications (object with ${uploads + 1} events): ${verification.requestsPerSecond}/s, p50 ${verification.p50} ms, p99 ${verification.p99} ms, errors ${verification.errors}`,
  );
  const fresh = await register('Short history');
  for (const [i, angle] of angles.entries()) await upload(fresh.object.id, angle, photos[i] as Buffer);
  const short = await measure({
    url: `${product.url}/api/v1/auction/public/verify/${fresh.object.service_serial}`,
    connections: 20,
    seconds,
    pid: product.pid,
  });
  lines.push(
    `public verifications (object with 5 events): ${short.requestsPerSecond}/s, p50 ${short.p50} ms, p99 ${short.p99} ms, errors ${short.errors}`,
  );
} finally {
  await product.stop();
}
for (const line of lines) console.log(line);
console.log(machineLine());
