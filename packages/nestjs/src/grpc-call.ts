import type { ExecutionContext } from '@nestjs/common';

// What the interceptor reads from a gRPC call: the caller's deadline (grpc-timeout, parsed by grpc-js) and a
// criticality in its metadata, in place of the HTTP headers of the `headers` option.

/** A gRPC handler's metadata and call (Nest passes `(data, metadata, call)`), recognised by their shape. */
export interface GrpcCall {
  readonly metadata: { get(key: string): unknown[] };
  readonly call: { getDeadline?(): Date | number };
}

export function grpcCall(context: ExecutionContext): GrpcCall | undefined {
  if (context.getType() !== 'rpc') return undefined;
  const metadata = context.getArgByIndex(1) as { get?: unknown; getMap?: unknown } | undefined;
  const call = context.getArgByIndex(2) as { getDeadline?: unknown } | undefined;
  if (typeof metadata?.get !== 'function' || typeof metadata.getMap !== 'function') return undefined;
  return { metadata: metadata as GrpcCall['metadata'], call: (call ?? {}) as GrpcCall['call'] };
}

/** The ms left of a gRPC call's deadline (grpc-js parsed the caller's grpc-timeout), or undefined without one. */
export function grpcBudget(grpc: GrpcCall): number | undefined {
  const deadline = grpc.call.getDeadline?.();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (at === undefined || !Number.isFinite(at)) return undefined;
  return Math.max(0, at - Date.now());
}

export function grpcMetadata(metadata: GrpcCall['metadata'], key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}
