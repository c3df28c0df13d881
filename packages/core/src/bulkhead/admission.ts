import type { ResilienceError } from '../errors/resilience-error';

/**
 * What `BulkheadRuntime.acquire` answers. `true` = admitted and holding one slot; a `ResilienceError` *value*
 * (never thrown) = rejected. Values, not exceptions, because under overload rejection is the common path and
 * must stay cheap (Fail at Scale: shedding has to cost less than serving).
 */
export type Admission = true | ResilienceError;

/**
 * A waiter parked in the bulkhead queue.
 *
 * - `result` settles with `true` once a slot is handed over, or with a `ResilienceError` value when the waiter
 *   is shed, displaced or found past its deadline at wake. It never rejects.
 * - `cancel()` leaves the queue at once (a caller abort or the executor's deadline timer); `result` then never
 *   settles. Idempotent. If a slot had already been handed over but the caller has not observed `result` yet
 *   (the grant and the abort raced within one tick), `cancel()` gives that slot back, so the caller owns
 *   nothing after cancelling. Once the caller has *observed* `true` it must call `release`, never `cancel`.
 */
export interface ParkedAdmission {
  readonly result: Promise<Admission>;
  cancel(): void;
}

/**
 * How an admitted call ended, for the adaptive limits. `neutral` (cancelled, overload, rejected further in) gives
 * the slot back without a latency sample, so aborted calls do not teach the limit anything (concurrency-limits
 * #176: dropped requests with ~0 RTT fool the gradient).
 */
export type BulkheadOutcome = 'success' | 'failure' | 'neutral';

/** Wired by the executor to events; all optional and called synchronously. A hook that throws is ignored. */
export interface BulkheadHooks {
  /** The integer limit changed (→ `bulkhead_limit`). */
  onLimit?(limit: number): void;
  /** A waiter was shed by CoDel at dequeue or displaced by a higher-criticality arrival (→ `bulkhead_shed`). */
  onShed?(criticality: number, sojourn: number): void;
  /** A `LatencyDigestStore` call threw or rejected (adaptive quantile mode); the sample was skipped. */
  onStoreError?(error: unknown): void;
}

/**
 * True when `acquire` parked the caller. Cheap: `true` is not an object, and a `ResilienceError` has no
 * `result` property.
 */
export function isParked(admission: Admission | ParkedAdmission): admission is ParkedAdmission {
  return typeof admission === 'object' && 'result' in admission;
}

/**
 * Hooks are called as methods of the hooks object (they may use `this`). Their errors are swallowed: a throwing
 * listener must not leave a waiter unsettled or a slot leaked, and bookkeeping is always done before a hook runs.
 */
export function emitLimit(hooks: BulkheadHooks, limit: number): void {
  try {
    hooks.onLimit?.(limit);
  } catch {
    // deliberately ignored (see above)
  }
}
export function emitShed(hooks: BulkheadHooks, criticality: number, sojourn: number): void {
  try {
    hooks.onShed?.(criticality, sojourn);
  } catch {
    // deliberately ignored (see above)
  }
}
export function emitStoreError(hooks: BulkheadHooks, error: unknown): void {
  try {
    hooks.onStoreError?.(error);
  } catch {
    // deliberately ignored (see above)
  }
}
