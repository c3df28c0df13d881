import type { ExceptionKind } from './resilience-error';

/**
 * The one outcome classification table (SPEC §4 "Outcome classification"), shared by the circuit breaker, the
 * adaptive throttle and retry so they can never disagree about what a result means:
 * - `healthy`: success, and caller errors that say nothing bad about the dependency (`validation`, `domain`,
 *   `not_found`, `conflict`, `precondition`, `authentication`, `authorization`) — and `configuration`, which is a
 *   mistake in our own setup, not a dependency signal;
 * - `failure`: `infrastructure`, `timeout`, `internal` (which is also what unclassified errors become);
 * - `overload`: `throttled`, `concurrency` — the dependency pushed back; it is alive;
 * - `cancelled`: an abort we caused (the caller's signal, a lost hedge race), whatever the error looks like.
 *
 * The breaker counts `failure` (and `healthy` as a call); it records neither `overload` nor `cancelled`. The
 * adaptive throttle counts only `healthy` as an accept. Retry uses its own `retryOn` kinds instead.
 */
export type OutcomeClass = 'healthy' | 'failure' | 'overload' | 'cancelled';

export const OUTCOME_CLASS_BY_KIND: Readonly<Record<ExceptionKind, OutcomeClass>> = Object.freeze({
  validation: 'healthy',
  domain: 'healthy',
  not_found: 'healthy',
  conflict: 'healthy',
  precondition: 'healthy',
  authentication: 'healthy',
  authorization: 'healthy',
  configuration: 'healthy',
  infrastructure: 'failure',
  timeout: 'failure',
  internal: 'failure',
  throttled: 'overload',
  concurrency: 'overload',
});

/**
 * Classifies one outcome. `kind` is `undefined` for a success; `cancelledByUs` wins over the kind (an aborted
 * call's error — usually an `AbortError` — says nothing about the dependency).
 */
export function outcomeClass(kind: ExceptionKind | undefined, cancelledByUs = false): OutcomeClass {
  if (cancelledByUs) return 'cancelled';
  return kind === undefined ? 'healthy' : (OUTCOME_CLASS_BY_KIND[kind] ?? 'failure');
}
