import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import {
  ambientLimits,
  headerNames,
  propagationHeaders,
  propagationSignal,
  type PropagationHeaderNames,
} from './propagation';

/**
 * Deadline and criticality propagation over gRPC (SPEC §14.4). gRPC carries the deadline itself (`grpc-timeout`,
 * written by the client library from the call's `deadline` and enforced on both ends), so only the criticality
 * travels as metadata. Structural, like the other integrations: `@ballast/core` names only the shapes of
 * `@grpc/grpc-js` it touches and depends on none of it.
 */

const GRPC_UNITS: readonly [string, number][] = [
  ['n', 1e-6],
  ['u', 1e-3],
  ['m', 1],
  ['S', 1_000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/**
 * A budget in ms as gRPC's `grpc-timeout` value (PROTOCOL-HTTP2: at most 8 digits and a unit): whole ms
 * (`"1500m"`) when they fit, else the smallest coarser unit, rounded up so the budget is never cut short by the
 * encoding (clamped at 99999999H). Never negative.
 */
export function formatGrpcTimeout(ms: number): string {
  const budget = ms > 0 ? ms : 0;
  for (const [unit, size] of GRPC_UNITS.slice(2)) {
    const value = Math.ceil(budget / size);
    if (value <= 99_999_999) return `${value}${unit}`;
  }
  return '99999999H';
}

/** A `grpc-timeout` value in ms, or undefined when it is not gRPC's format (1–8 digits, one of `HMSmun`). */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value.trim());
  if (match === null) return undefined;
  const size = GRPC_UNITS.find(([unit]) => unit === match[2])![1];
  return Number(match[1]) * size;
}

/** gRPC's `Metadata`, as far as {@link grpcPropagation} touches it. */
export interface GrpcMetadataLike {
  get(key: string): unknown[];
  set(key: string, value: string): void;
}

/**
 * For a gRPC client call (`@grpc/grpc-js` directly, or a `@nestjs/microservices` `ClientGrpc` service method, which
 * takes `(request, metadata, callOptions)`): adds the criticality to `metadata` (a value already there wins) and
 * returns the call options carrying the remaining budget as a `deadline`, which grpc-js sends as `grpc-timeout`
 * in gRPC's own format. Without an ambient deadline the options are empty.
 */
export function grpcPropagation<M extends GrpcMetadataLike>(
  metadata: M,
  names?: PropagationHeaderNames,
): { metadata: M; options: { deadline?: Date } } {
  const headers = propagationHeaders(names);
  const options: { deadline?: Date } = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === (names?.deadline?.toLowerCase() ?? 'x-deadline-budget-ms')) {
      options.deadline = new Date(Date.now() + Number(value));
    } else if (metadata.get(name).length === 0) {
      metadata.set(name, value);
    }
  }
  return { metadata, options };
}

/** grpc-js's `InterceptorOptions` (the call's options), as far as the interceptor touches them. */
export interface GrpcInterceptorOptionsLike {
  deadline?: Date | number | undefined;
}

/** grpc-js's `InterceptingCallInterface`, as far as the interceptor touches it. */
export interface GrpcInterceptingCallLike {
  start(metadata: GrpcMetadataLike, listener?: object): void;
  cancelWithStatus(status: number, details: string): void;
}

/**
 * A grpc-js client interceptor (`new Client(url, creds, { interceptors: [grpcPropagationInterceptor()] })`, or a
 * `@nestjs/microservices` gRPC client's `channelOptions.interceptors`). Generic so that grpc-js's own `Interceptor`
 * type (whose options and call are richer than what the interceptor touches) fits it.
 */
export type GrpcPropagationInterceptor = <
  O extends GrpcInterceptorOptionsLike,
  C extends GrpcInterceptingCallLike,
>(
  options: O,
  nextCall: (options: O) => C,
) => C;

/** grpc-js's status codes (the `Status` enum) the interceptor ends a call with. */
const CANCELLED = 1;
const DEADLINE_EXCEEDED = 4;

/** A listener callback grpc-js may call (on the listener, which may keep state). */
type ListenerMethod = (this: object, ...args: unknown[]) => void;

/**
 * A grpc-js client interceptor that sends the ambient deadline and criticality on every call made inside their
 * scope: the remaining budget becomes the call's `deadline` (grpc-js sends it as `grpc-timeout` and ends the call
 * with `DEADLINE_EXCEEDED` when it passes) and the criticality goes into the metadata under `names.criticality`
 * (default `x-criticality`). A deadline or criticality the caller set on the call wins. The call is cancelled —
 * `DEADLINE_EXCEEDED` when the ambient deadline ended, `CANCELLED` otherwise — when the ambient deadline passes on
 * the clock that measured it or the ambient call's signal aborts; the timer and listener go when the call ends.
 * Outside any scope it passes the call through untouched. Works for unary and streaming calls.
 */
export function grpcPropagationInterceptor(names?: PropagationHeaderNames): GrpcPropagationInterceptor {
  const n = headerNames(names); // validates the names once, here
  return <O extends GrpcInterceptorOptionsLike, C extends GrpcInterceptingCallLike>(
    options: O,
    nextCall: (options: O) => C,
  ): C => {
    const { remaining } = ambientLimits();
    const criticality = propagationHeaders(n)[n.criticality];
    const aborter = propagationSignal();
    if (remaining === undefined && criticality === undefined && aborter === undefined)
      return nextCall(options);
    const deadline =
      options.deadline !== undefined || remaining === undefined
        ? options
        : { ...options, deadline: new Date(Date.now() + Math.max(0, remaining)) };
    const call = nextCall(deadline);
    const start = call.start;
    // The call object grpc-js (or the next interceptor) built, with its `start` extended: returning it keeps every
    // other method grpc-js calls on it (and any it adds later) as it is.
    call.start = function (this: C, metadata: GrpcMetadataLike, listener?: object): void {
      if (criticality !== undefined && metadata.get(n.criticality).length === 0)
        metadata.set(n.criticality, criticality);
      if (aborter === undefined) return start.call(this, metadata, listener);
      start.call(this, metadata, releasing(listener, aborter.release));
      const { signal } = aborter;
      const cancel = (): void => {
        const expired =
          signal.reason instanceof ResilienceError && signal.reason.code === ErrorCode.DEADLINE_EXCEEDED;
        call.cancelWithStatus(
          expired ? DEADLINE_EXCEEDED : CANCELLED,
          expired
            ? 'Deadline exceeded (Ballast: the caller’s deadline passed)'
            : 'Cancelled (Ballast: the caller’s call was aborted)',
        );
      };
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
    };
    return call;
  };
}

/** `listener` (partial, as grpc-js allows), calling `release` when the call's status arrives. */
function releasing(listener: object | undefined, release: () => void): object {
  const forward =
    (name: string) =>
    (...args: unknown[]): void => {
      const fn = (listener as Record<string, unknown> | undefined)?.[name] as ListenerMethod | undefined;
      if (typeof fn === 'function') fn.apply(listener!, args);
    };
  return {
    onReceiveMetadata: forward('onReceiveMetadata'),
    onReceiveMessage: forward('onReceiveMessage'),
    onReceiveStatus: (...args: unknown[]): void => {
      release();
      forward('onReceiveStatus')(...args);
    },
  };
}
