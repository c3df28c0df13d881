import type { ArgumentsHost } from '@nestjs/common';
import { ClientClosedRequestError } from './client-disconnect';
import type { MappedResilienceError } from './http-error-mapping';

// What the interceptor reads from a gRPC call: the caller's deadline (grpc-timeout, parsed by grpc-js), a
// criticality in its metadata, in place of the HTTP headers of the `headers` option, and the caller's cancellation.

/** A gRPC handler's metadata and call (Nest passes `(data, metadata, call)`), recognised by their shape. */
export interface GrpcCall {
  readonly metadata: { get(key: string): unknown[] };
  readonly call: {
    getDeadline?(): Date | number;
    once?(event: 'cancelled', listener: () => void): unknown;
    readonly cancelled?: boolean;
  };
}

export function grpcCall(context: ArgumentsHost): GrpcCall | undefined {
  if (context.getType() !== 'rpc') return undefined;
  const metadata = context.getArgByIndex(1) as { get?: unknown; getMap?: unknown } | undefined;
  const call = context.getArgByIndex(2) as { getDeadline?: unknown } | undefined;
  if (typeof metadata?.get !== 'function' || typeof metadata.getMap !== 'function') return undefined;
  return { metadata: metadata as GrpcCall['metadata'], call: (call ?? {}) as GrpcCall['call'] };
}

/**
 * The ms left of a gRPC call's deadline (grpc-js parsed the caller's grpc-timeout), at most `max` (the
 * `maxInboundBudget` cap, as for HTTP), or undefined without one.
 */
export function grpcBudget(grpc: GrpcCall | undefined, max: number): number | undefined {
  const deadline = grpc?.call.getDeadline?.();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (at === undefined || !Number.isFinite(at)) return undefined;
  return Math.min(max, Math.max(0, at - Date.now()));
}

export function grpcMetadata(metadata: GrpcCall['metadata'], key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Aborts `controller` (with a {@link ClientClosedRequestError}) when the caller cancels the gRPC call — grpc-js emits
 * `cancelled` on the server call; Nest does not unsubscribe a unary handler then, so without this its work would go
 * on for nobody. One listener on the call object, which lives as long as the call. Nothing without that shape.
 */
export function abortOnCancel(grpc: GrpcCall | undefined, controller: AbortController): void {
  const call = grpc?.call;
  if (typeof call?.once !== 'function') return;
  if (call.cancelled === true) controller.abort(new ClientClosedRequestError());
  else call.once('cancelled', () => controller.abort(new ClientClosedRequestError()));
}

/** gRPC status codes (grpc-js's `Status`) Ballast answers with. */
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

/**
 * The error a gRPC handler's call fails with (grpc-js reads a numeric `code` and `details`): Ballast's rejections
 * with gRPC's own status codes — 429 → RESOURCE_EXHAUSTED, 503 → UNAVAILABLE, 504 → DEADLINE_EXCEEDED — and the same
 * generic message as the HTTP body. Without a numeric code grpc-js would answer UNKNOWN.
 */
export function grpcStatusError(mapped: MappedResilienceError): {
  code: number;
  details: string;
  message: string;
} {
  const code =
    mapped.status === 429 ? RESOURCE_EXHAUSTED : mapped.status === 503 ? UNAVAILABLE : DEADLINE_EXCEEDED;
  return { code, details: mapped.body.message, message: mapped.body.message };
}

/**
 * The rejection of a gRPC call whose deadline had already passed when it arrived (SPEC §14.4): the caller has given
 * up, so the handler does not run and the call fails with DEADLINE_EXCEEDED, as an HTTP request answers 504.
 * Caught and mapped by `ResilienceExceptionFilter`. @internal
 */
export class GrpcDeadlineExceededError extends Error {
  override readonly name = 'GrpcDeadlineExceededError';
  readonly code = DEADLINE_EXCEEDED;
  readonly details = 'The request deadline was exceeded.';
  constructor() {
    super('The request deadline was exceeded.');
  }
}

/** The interceptor's answer to a gRPC call that arrived with its deadline passed. @internal */
export function grpcExpired(): GrpcDeadlineExceededError {
  return new GrpcDeadlineExceededError();
}
