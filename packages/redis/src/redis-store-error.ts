import { ErrorCode, ResilienceError } from '@ballast/core';

/** Which Redis store failed; the same names as core's `StoreName`, so events and metrics line up. */
export type RedisStoreName = 'circuitBreaker' | 'rateLimit' | 'latencyDigest' | 'control';

const BRAND = Symbol.for('ballast.RedisStoreError');

/**
 * Thrown (as a rejection) by every Redis store call that Redis did not answer: a connection or server error, or no
 * reply within `commandTimeout`. The executor's `failOpenOnStoreError` then decides (SPEC §5): admit on local state
 * and emit `store_degraded`, or fail the call with `resilience_store_unavailable`.
 *
 * It is a `ResilienceError` of kind `infrastructure` with code `resilience_store_unavailable`, so code that sees it
 * outside the executor classifies it correctly; the Redis error is `cause`.
 */
export class RedisStoreError extends ResilienceError {
  readonly store: RedisStoreName;
  /** The store operation that failed, e.g. `acquire`. */
  readonly operation: string;
  /** True when `commandTimeout` elapsed (the command may still run on the server later). */
  readonly timedOut: boolean;

  constructor(store: RedisStoreName, operation: string, cause: unknown, timedOut: boolean) {
    const why = timedOut ? 'timed out' : `failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    super({
      kind: 'infrastructure',
      code: ErrorCode.STORE_UNAVAILABLE,
      message: `Redis ${store} store: ${operation} ${why}`,
      cause,
      details: { store, operation, timedOut },
    });
    this.name = 'RedisStoreError';
    this.store = store;
    this.operation = operation;
    this.timedOut = timedOut;
  }
}
Object.defineProperty(RedisStoreError.prototype, BRAND, { value: true });

/** True for a {@link RedisStoreError}, even one created by another copy of this package. */
export function isRedisStoreError(error: unknown): error is RedisStoreError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[BRAND] === true;
}
