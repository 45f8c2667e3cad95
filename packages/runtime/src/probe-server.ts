import { createServer, type Server } from 'node:http';
import { checkReadiness, type ReadinessChecks } from './readiness.ts';

/**
 * /health and /ready for a process that has no HTTP server of its own (the backend services),
 * for Kubernetes probes. Resolves with the bound port (useful when `port` is 0).
 */
export async function startProbeServer(port: number, checks: ReadinessChecks): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return send(405, { status: 'method not allowed' });
    if (request.url === '/health') return send(200, { status: 'ok' });
    if (request.url === '/ready') {
      const report = await checkReadiness(checks);
      return send(report.ready ? 200 : 503, { status: report.ready ? 'ready' : 'not_ready', checks: report.checks });
    }
    return send(404, { status: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
