import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { HallmarkError } from '@hallmark/contracts';
import type { FastifyInstance } from 'fastify';

/**
 * A gateway that stops (SIGTERM: a rolling update, Ctrl-C) finishes the requests in flight and then
 * closes their connections, without waiting on clients. Node's `server.close()` closes the
 * connections idle at that moment only: a kept-alive connection whose request was in flight stayed
 * open after its answer until HALLMARK_HTTP_KEEP_ALIVE_TIMEOUT_MS (72 s by default) ran out, and
 * the stop timed out with its work done (the embedded form exited 1 after 10 s).
 *
 * So, once closing: every answer says `Connection: close` (the client opens its next connection
 * elsewhere; Node closes the socket after the answer); an answer whose headers left before the
 * stop closes its connection once it has ended; and a request read after the stop began (one
 * pipelined behind another) is refused 503 SERVICE_UNAVAILABLE in the API's envelope, not run
 * (fastify's own 503 has another body).
 *
 * A connection that has sent no request yet (a client's spare connection, or one that connected and
 * said nothing) is closed when the stop begins: Node's `closeIdleConnections()` passes such
 * connections by, and the stop waited on them until their client closed them or a timeout ran out
 * (69 s in a test whose client had abandoned six requests before sending them; the embedded form
 * exits 1 after its 10 s stop timeout).
 */
export function drainOnClose(app: FastifyInstance): void {
  let closing = false;
  const withoutRequest = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    withoutRequest.add(socket);
    socket.once('close', () => withoutRequest.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage) => {
    withoutRequest.delete(request.socket);
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const socket of withoutRequest) socket.destroy();
  });
  // Callbacks, not async functions: these run on every request, and a promise each costs more than
  // the check.
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!closing) return done();
    done(new HallmarkError('SERVICE_UNAVAILABLE', 'This gateway is stopping; send the request again.', { retryAfterSeconds: 1 }));
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing && request.raw.httpVersionMajor < 2) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', (request, _reply, done) => {
    if (closing && request.raw.httpVersionMajor < 2) request.raw.socket.end();
    done();
  });
}
