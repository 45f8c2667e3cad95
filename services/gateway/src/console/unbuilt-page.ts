/**
 * What /console answers where the console was never built (a clone installed with --ignore-scripts,
 * an image built without it): how to build it, instead of a 404 or a 500. No style, no script: the
 * console's CSP holds for it too.
 */
export const unbuiltConsolePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hallmark console: not built</title>
</head>
<body>
<main>
<h1>The Hallmark console is not built on this gateway</h1>
<p>The console is a single-page app in <code>apps/console</code>, built by Vite into <code>apps/console/dist</code>.
<code>pnpm install</code> builds it; where that did not run (installed with <code>--ignore-scripts</code>, or the build failed), build it with:</p>
<pre><code>npx -y pnpm@10.34.8 --filter @hallmark/console build</code></pre>
<p>then restart the gateway and reload this page. The API itself is unaffected: see <a href="/api/v1/openapi.json">the OpenAPI document</a>.</p>
</main>
</body>
</html>
`;
