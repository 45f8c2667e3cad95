// The public resolver (issue #8) next to POST /code/verify, in one run of the embedded form:
// requests per second and p99 of the HTML page when every view is a scan (reload window 0), of
// the page when one client reloads (the scan is shown again, not counted), and of the API verify;
// and (issue #18) the 307 redirect from the printed link to the page, which a scan pays on top.
//
//   pnpm bench:resolver
import autocannon from 'autocannon';
import { machineLine, measure, operatorKey, startEmbeddedProduct } from './support.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rows: string[] = [];

async function run(reloadSeconds: string) {
  const product = await startEmbeddedProduct({
    HALLMARK_PUBLIC_RATE_LIMIT: '100000',
    HALLMARK_RESOLVER_RELOAD_SECONDS: reloadSeconds,
  });
  try {
    const headers = { 'x-api-key': operatorKey, 'content-type': 'application/json' };
    const created = await fetch(`${product.url}/api/v1/code/generate`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        gtin: '09506000134352',
        serialNumber: 'BENCH-1',
        batchNumber: 'L1',
        metadata: { name: 'Bench bottle' },
      }),
    });
    const { url } = (await created.json()) as { url: string };
    const path = url.slice(new URL(url).origin.length);
    // The page itself (where the printed link's 307 leads), then the redirect alone.
    const page = await measure({ url: `${product.url}/verify${path}`, connections: 20, seconds, pid: product.pid });
    const redirect = await autocannon({ url: `${product.url}${path}`, connections: 20, duration: seconds });
    const redirects = redirect['3xx'];
    const verify = await measure({
      url: `${product.url}/api/v1/code/verify`,
      method: 'POST',
      headers,
      body: JSON.stringify({ url }),
      connections: 20,
      seconds,
      pid: product.pid,
    });
    return {
      page,
      verify,
      redirect: {
        requestsPerSecond: Math.round(redirect.requests.average),
        p50: redirect.latency.p50,
        p99: redirect.latency.p99,
        // Anything but the 307 is an error here.
        errors: redirect.errors + redirect.requests.total - redirects,
      },
    };
  } finally {
    await product.stop();
  }
}

const scans = await run('0');
rows.push(
  `| resolver page, every view a scan | ${scans.page.requestsPerSecond} | ${scans.page.p50} | ${scans.page.p99} | ${scans.page.cpuMicrosPerRequest} | ${scans.page.errors} |`,
);
rows.push(
  `| printed link → 307 to the page (the redirect alone, not a scan) | ${scans.redirect.requestsPerSecond} | ${scans.redirect.p50} | ${scans.redirect.p99} | – | ${scans.redirect.errors} |`,
);
rows.push(
  `| POST /code/verify (same run) | ${scans.verify.requestsPerSecond} | ${scans.verify.p50} | ${scans.verify.p99} | ${scans.verify.cpuMicrosPerRequest} | ${scans.verify.errors} |`,
);
const reloads = await run('10');
rows.push(
  `| resolver page, one client reloading (shown again, not counted) | ${reloads.page.requestsPerSecond} | ${reloads.page.p50} | ${reloads.page.p99} | ${reloads.page.cpuMicrosPerRequest} | ${reloads.page.errors} |`,
);
console.log(`Resolver, ${machineLine()}, 20 connections, ${seconds} s each`);
console.log('| route | requests/s | p50 ms | p99 ms | CPU µs/request | errors |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
