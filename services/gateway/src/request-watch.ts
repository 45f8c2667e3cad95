import type { FastifyRequest } from 'fastify';

/** Why a request's watch aborted when its client's connection closed: no answer can reach the client. */
export class ClientGone extends Error {
  constructor() {
    super('The client closed its connection before its request was done.');
    this.name = 'ClientGone';
  }
}

/** A request watched for the end of anyone waiting for it. */
export interface RequestWatch {
  /**
   * Aborted with a `ClientGone` once the request's connection closes (or at once if it is closed
   * already), or with `deadline.reason()` once `deadline.inMs` has passed.
   */
  signal: AbortSignal;
  /** Stops watching: clears the timer and the connection's listener (a keep-alive connection serves other requests). */
  stop(): void;
}

export function watchRequest(request: FastifyRequest, deadline: { inMs: number; reason: () => Error }): RequestWatch {
  const controller = new AbortController();
  const socket = request.raw.socket;
  const onClose = () => controller.abort(new ClientGone());
  const timer = setTimeout(() => controller.abort(deadline.reason()), Math.max(0, deadline.inMs));
  socket.once('close', onClose);
  // Not request.raw.destroyed: a request whose body has been read is destroyed too, its connection open.
  if (socket.destroyed) onClose();
  return {
    signal: controller.signal,
    stop() {
      clearTimeout(timer);
      socket.removeListener('close', onClose);
    },
  };
}

/**
 * `reading`'s value, unless `signal` aborts first: then its reason, at once (a read of a request
 * whose connection closed may never end). A later failure of `reading` is ignored.
 */
export function beforeAbort<T>(signal: AbortSignal, reading: Promise<T>): Promise<T> {
  reading.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    reading.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
