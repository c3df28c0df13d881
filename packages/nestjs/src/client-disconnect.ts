/**
 * Wiring between an HTTP exchange and a call's `AbortSignal`, for both Express (`res` is Node's ServerResponse)
 * and Fastify (`reply.raw` is). Node's response emits `close` both after a normal finish and when the connection
 * drops; only the latter leaves `writableFinished` false, which is the reliable "client went away" test on every
 * Node version (`req.aborted` is deprecated, and the request's own `close` fires once its body is read).
 */

/** The abort reason when the client disconnects; the exception filter answers it quietly with 499. */
export class ClientClosedRequestError extends Error {
  override readonly name = 'ClientClosedRequestError';
  constructor() {
    super('The client closed the connection before the response was sent');
  }
}

interface RawResponse {
  once(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
  readonly writableFinished?: boolean;
  readonly destroyed?: boolean;
}

/** Node's ServerResponse behind an adapter's response object, if there is one. */
export function rawResponse(response: unknown): RawResponse | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const raw = (response as { raw?: unknown }).raw ?? response;
  return typeof (raw as RawResponse).once === 'function' &&
    typeof (raw as RawResponse).removeListener === 'function'
    ? (raw as RawResponse)
    : undefined;
}

const noop = (): void => {};

/**
 * Aborts `controller` with a {@link ClientClosedRequestError} when the client disconnects before the response is
 * complete. Returns the function that stops watching (always call it, so listeners never pile up on keep-alive).
 */
export function abortOnClientDisconnect(response: unknown, controller: AbortController): () => void {
  const raw = rawResponse(response);
  if (raw === undefined) return noop;
  if (raw.destroyed === true && raw.writableFinished !== true) {
    controller.abort(new ClientClosedRequestError());
    return noop;
  }
  const onClose = (): void => {
    if (raw.writableFinished !== true) controller.abort(new ClientClosedRequestError());
  };
  raw.once('close', onClose);
  return () => {
    raw.removeListener('close', onClose);
  };
}

/** Whether the response can still be written (the client is there and nothing was sent yet). */
export function isResponseGone(response: unknown): boolean {
  const raw = rawResponse(response);
  return raw !== undefined && raw.destroyed === true;
}

/** Reads one request header (Express and Fastify both expose Node's lower-cased `headers`). */
export function requestHeader(request: unknown, lowerCaseName: string): string | undefined {
  const headers = (request as { headers?: Record<string, string | string[] | undefined> } | undefined)
    ?.headers;
  const value = headers?.[lowerCaseName];
  return Array.isArray(value) ? value[0] : value;
}
