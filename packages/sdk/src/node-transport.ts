/**
 * The transport in Node: `node:http` and `node:https` with a keep-alive agent of the client's own.
 * Node 20's `fetch` (undici) costs the client several times the CPU of `node:http` a request, and
 * any AbortSignal given to it costs more again (docs/PERFORMANCE.md, "SDK overhead"); a high-volume
 * verifier pays that on every call, so in Node the SDK does without it. Bodies that are not text (a
 * multipart upload, a Blob) still go over fetch, which knows how to send them.
 *
 * Loaded by name at run time, and typed here by the little it uses: the SDK's declarations stay
 * free of Node's types, and a browser bundle never pulls `node:http` in.
 */
import { APIUserAbortError } from './errors.ts';
import { concatBytes, declaredTooLarge, type HttpAnswer, type Transport, timeoutError, tooLargeError } from './transport.ts';

interface NodeIncomingMessage {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  on(event: 'data', listener: (chunk: Uint8Array) => void): this;
  on(event: 'end', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close', listener: () => void): this;
}

interface NodeClientRequest {
  on(event: 'error', listener: (error: Error) => void): this;
  destroy(error?: Error): this;
  end(body?: string): this;
}

interface NodeHttpModule {
  Agent: new (options: { keepAlive: boolean }) => object;
  request(
    url: string,
    options: { method: string; headers: Record<string, string>; agent: object },
    onResponse: (response: NodeIncomingMessage) => void,
  ): NodeClientRequest;
}

interface NodeModules {
  http: NodeHttpModule;
  https: NodeHttpModule;
  byteLength: (text: string) => number;
}

const nodeVersion = (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node;

/** True where `node:http` can be loaded (Node, and runtimes that offer Node's modules). */
export const runsOnNode = typeof nodeVersion === 'string';

// A name in a variable: bundlers leave the import alone, and TypeScript needs no Node types for it.
const load = (name: string): Promise<unknown> => import(/* @vite-ignore */ name);

let loading: Promise<NodeModules> | undefined;
/** Once loaded, used without waiting (a request need not wait a turn of the microtask queue). */
let loadedModules: NodeModules | undefined;
function nodeModules(): Promise<NodeModules> {
  loading ??= Promise.all([load('node:http'), load('node:https'), load('node:buffer')]).then(([http, https, buffer]) => {
    const { Buffer } = buffer as { Buffer: { byteLength(text: string): number } };
    loadedModules = {
      http: http as NodeHttpModule,
      https: https as NodeHttpModule,
      byteLength: (text) => Buffer.byteLength(text),
    };
    return loadedModules;
  });
  return loading;
}

/** Statuses whose answer has no body, as a fetch `Response` requires. */
const bodilessStatuses = new Set([101, 103, 204, 205, 304]);

function answerOf(message: NodeIncomingMessage, body: Uint8Array): HttpAnswer {
  const status = message.statusCode ?? 0;
  let headers: Headers | undefined;
  let response: Response | undefined;
  const answer: HttpAnswer = {
    status,
    body,
    header(name) {
      const value = message.headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
    get headers() {
      if (headers === undefined) {
        headers = new Headers();
        const raw = message.rawHeaders;
        for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] ?? '', raw[index + 1] ?? '');
      }
      return headers;
    },
    get response() {
      response ??= new Response(bodilessStatuses.has(status) ? null : (body as Uint8Array<ArrayBuffer>), {
        status,
        headers: answer.headers,
      });
      return response;
    },
  };
  return answer;
}

/**
 * Over `node:http`/`node:https`, one keep-alive agent each for this transport (its idle sockets do not
 * keep the process alive). The timer destroys the request, the answer's body included; so does the
 * caller's signal. Never follows a redirect: only the operations that answer one (`redirect: 'manual'`)
 * take a 3xx as their answer, and the API sends none elsewhere.
 */
export function nodeTransport(fallback: Transport): Transport {
  let agents: { http: object; https: object } | undefined;
  return async (request) => {
    if (request.body !== undefined && typeof request.body !== 'string') return fallback(request);
    if (request.signal?.aborted) throw new APIUserAbortError('The call was aborted.');
    const modules = loadedModules ?? (await nodeModules());
    agents ??= { http: new modules.http.Agent({ keepAlive: true }), https: new modules.https.Agent({ keepAlive: true }) };
    const secure = request.url.startsWith('https:');
    const agent = secure ? agents.https : agents.http;
    // Text as it is: Node sends a text body in the same write as the headers (bytes take a second one).
    const body = request.body;
    const headers =
      body === undefined ? request.headers : { ...request.headers, 'content-length': String(modules.byteLength(body)) };
    const userSignal = request.signal;

    return new Promise<HttpAnswer>((resolve, reject) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        userSignal?.removeEventListener('abort', onUserAbort);
        outcome();
      };
      const fail = (error: Error) => finish(() => reject(error));
      // Throws at once for a request Node will not send (a header value it refuses): no timer set yet.
      const outgoing = (secure ? modules.https : modules.http).request(
        request.url,
        { method: request.method, headers, agent },
        (message) => {
          if (declaredTooLarge(request, message.headers['content-length'])) return stop(tooLargeError(request));
          const chunks: Uint8Array[] = [];
          let length = 0;
          message.on('data', (chunk) => {
            length += chunk.length;
            if (length > request.maxResponseBytes) return stop(tooLargeError(request));
            chunks.push(chunk);
          });
          message.on('end', () => finish(() => resolve(answerOf(message, concatBytes(chunks, length)))));
          message.on('error', fail);
          // A connection closed mid-answer ('close' follows every 'end': no Error made for nothing).
          message.on('close', () => {
            if (!settled) fail(new Error('The connection closed before the answer ended.'));
          });
        },
      );
      const stop = (error: Error) => {
        fail(error);
        outgoing.destroy(error);
      };
      const onUserAbort = () => stop(new APIUserAbortError('The call was aborted.'));
      timer = setTimeout(() => stop(timeoutError(request)), request.timeoutMs);
      outgoing.on('error', fail);
      userSignal?.addEventListener('abort', onUserAbort, { once: true });
      outgoing.end(body);
    });
  };
}
