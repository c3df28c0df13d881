import { keepSignalWatched } from '@ballast/core';

/**
 * Wiring between an HTTP exchange and a call's `AbortSignal`, for both Express (`req` is Node's IncomingMessage)
 * and Fastify (`request.raw` is). A client that goes away closes its connection; that `close` is the reliable
 * signal on every Node version (`req.aborted` is deprecated, and the request's own `close` fires as soon as its
 * body has been read).
 *
 * One AbortController per *connection*, not per request: keep-alive connections carry many requests, and creating
 * an AbortController plus a listener pair per request costs more than the rest of the resilience pipeline. When the
 * connection closes, every call still running for it is dead anyway (pipelined requests included), and calls that
 * already finished no longer listen.
 */

/** The abort reason when the client disconnects; the exception filter answers it quietly with 499. */
export class ClientClosedRequestError extends Error {
  override readonly name = 'ClientClosedRequestError';
  constructor() {
    super('The client closed the connection before the response was sent');
  }
}

interface Connection {
  once(event: 'close', listener: () => void): unknown;
  readonly destroyed?: boolean;
}

interface RawResponse {
  readonly destroyed?: boolean;
}

const signals = new WeakMap<Connection, AbortSignal>();

function connectionOf(request: unknown): Connection | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const raw = ((request as { raw?: unknown }).raw ?? request) as { socket?: unknown };
  const socket = raw.socket as Connection | null | undefined;
  return socket !== null && typeof socket?.once === 'function' ? socket : undefined;
}

/**
 * The signal aborted (with a {@link ClientClosedRequestError}) when the client's connection closes; undefined when
 * the request has no Node connection (a non-HTTP transport, a test double).
 */
export function clientDisconnectSignal(request: unknown): AbortSignal | undefined {
  const connection = connectionOf(request);
  if (connection === undefined) return undefined;
  let signal = signals.get(connection);
  if (signal === undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    if (connection.destroyed === true) controller.abort(new ClientClosedRequestError());
    else {
      connection.once('close', () => controller.abort(new ClientClosedRequestError()));
      // The signal lives as long as the connection: core's abort listener stays on it for that long instead of
      // being added and removed around every request of a keep-alive connection.
      keepSignalWatched(signal);
    }
    signals.set(connection, signal);
  }
  return signal;
}

/** Whether the response can no longer be written (its connection is gone). */
export function isResponseGone(response: unknown): boolean {
  if (typeof response !== 'object' || response === null) return false;
  const raw = ((response as { raw?: unknown }).raw ?? response) as RawResponse;
  return raw.destroyed === true;
}

/** Reads one request header (Express and Fastify both expose Node's lower-cased `headers`). */
export function requestHeader(request: unknown, lowerCaseName: string): string | undefined {
  const headers = (request as { headers?: Record<string, string | string[] | undefined> } | undefined)
    ?.headers;
  const value = headers?.[lowerCaseName];
  return Array.isArray(value) ? value[0] : value;
}
