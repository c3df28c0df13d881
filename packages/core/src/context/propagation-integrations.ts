import {
  propagationHeaders,
  propagationSignal,
  type PropagationHeaderNames,
  type PropagationSignal,
} from './propagation';

/**
 * Ready integrations of {@link propagationHeaders} (SPEC §14.4) for undici (axios: axios-propagation.ts; gRPC: grpc-propagation.ts). They are structural:
 * each takes the library's objects as arguments and names only the shapes it uses, so `@ballast/core` depends on
 * none of those libraries (SPEC §1 layering) and works with any version that has those shapes.
 */

// ---------------------------------------------------------------------------------------------------------------
// undici

/** The part of undici's `DispatchController` (undici ≥ 7) the interceptor uses. */
interface UndiciController {
  abort(reason: Error): void;
}

/** undici's `DispatchHandler` (the controller API of undici ≥ 7), as far as the interceptor touches it. */
export interface UndiciHandler {
  onRequestStart?(controller: UndiciController, context: unknown): void;
  onResponseEnd?(controller: UndiciController, trailers: unknown): void;
  onResponseError?(controller: UndiciController, error: Error): void;
  [other: string]: unknown;
}

/** undici's `Dispatcher.DispatchOptions`, as far as the interceptor touches it. */
export interface UndiciDispatchOptions {
  headers?: unknown;
}

export type UndiciDispatch<O = UndiciDispatchOptions, H = UndiciHandler> = (
  options: O,
  handler: H,
) => boolean;

/**
 * An undici interceptor: `agent.compose(undiciPropagation())`. Generic so that undici's own `Dispatch` type (whose
 * options and handler are richer than what the interceptor touches) fits it.
 */
export type UndiciInterceptor = <O extends UndiciDispatchOptions, H extends object>(
  dispatch: UndiciDispatch<O, H>,
) => UndiciDispatch<O, H>;

/** Header values of undici's dispatch options: a record, an iterable of pairs, or a flat array (name, value, …). */
function withDefaults(headers: unknown, extra: Record<string, string>): unknown {
  const keys = Object.keys(extra);
  if (keys.length === 0) return headers;
  if (headers === undefined || headers === null) return { ...extra };
  if (Array.isArray(headers) && (headers.length === 0 || !Array.isArray(headers[0]))) {
    const present = new Set<string>();
    for (let i = 0; i < headers.length; i += 2) present.add(String(headers[i]).toLowerCase());
    const out: unknown[] = headers.slice();
    for (const key of keys) if (!present.has(key)) out.push(key, extra[key]);
    return out;
  }
  const pairs: [string, unknown][] =
    typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function'
      ? ([...(headers as Iterable<[string, unknown]>)] as [string, unknown][])
      : Object.entries(headers as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  const present = new Set<string>();
  for (const [name, value] of pairs) {
    out[name] = value;
    present.add(name.toLowerCase());
  }
  for (const key of keys) if (!present.has(key)) out[key] = extra[key];
  return out;
}

/**
 * An undici interceptor that adds the propagation headers (a header the request already has wins) and aborts the
 * request when the ambient deadline ends or the ambient call's signal aborts. The timer and listeners go when the
 * response ends or fails. Works with undici 7 and 8 (the controller handler API).
 */
export function undiciPropagation(names?: PropagationHeaderNames): UndiciInterceptor {
  propagationHeaders(names); // validates the names once, here
  return <O extends UndiciDispatchOptions, H extends object>(dispatch: UndiciDispatch<O, H>) =>
    (options: O, handler: H) => {
      const extra = propagationHeaders(names);
      const aborter = propagationSignal();
      const next = { ...options, headers: withDefaults(options.headers, extra) } as O;
      if (aborter === undefined) return dispatch(next, handler);
      return dispatch(next, abortingHandler(handler as UndiciHandler, aborter) as unknown as H);
    };
}

function abortingHandler(handler: UndiciHandler, aborter: PropagationSignal): UndiciHandler {
  return new AbortingHandler(handler, aborter) as unknown as UndiciHandler;
}

type Callback = (this: UndiciHandler, ...args: unknown[]) => void;

/**
 * Forwards undici's controller callbacks to `handler` (called on it: undici's own handlers keep private state),
 * aborting the request through its controller when the propagation signal aborts, and letting go of the signal
 * when the response ends or fails.
 */
class AbortingHandler {
  #onAbort: (() => void) | undefined;

  constructor(
    private readonly handler: UndiciHandler,
    private readonly aborter: PropagationSignal,
  ) {}

  #forward(name: string, args: unknown[]): void {
    const fn = this.handler[name] as Callback | undefined;
    if (typeof fn === 'function') fn.apply(this.handler, args);
  }

  #done(): void {
    if (this.#onAbort !== undefined) this.aborter.signal.removeEventListener('abort', this.#onAbort);
    this.aborter.release();
  }

  onRequestStart(controller: UndiciController, context: unknown): void {
    const { signal } = this.aborter;
    if (signal.aborted) {
      this.#done();
      controller.abort(signal.reason as Error);
    } else {
      this.#onAbort = () => controller.abort(signal.reason as Error);
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    this.#forward('onRequestStart', [controller, context]);
  }

  onRequestUpgrade(...args: unknown[]): void {
    this.#done();
    this.#forward('onRequestUpgrade', args);
  }

  onResponseStart(...args: unknown[]): void {
    this.#forward('onResponseStart', args);
  }

  onResponseData(...args: unknown[]): void {
    this.#forward('onResponseData', args);
  }

  onResponseEnd(...args: unknown[]): void {
    this.#done();
    this.#forward('onResponseEnd', args);
  }

  onResponseError(...args: unknown[]): void {
    this.#done();
    this.#forward('onResponseError', args);
  }
}
