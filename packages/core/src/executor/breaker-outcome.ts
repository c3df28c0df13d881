import { breakerStateEvent } from '../events';
import type { BreakerOutcome, BreakerPermit, BreakerRecordResult, BreakerTransition } from '../stores/ports';
import type { CallState } from './call-state';
import { isPromiseLike } from './engine';

/** Emits a `breaker_state` event for a transition the store reported. */
export function breakerTransition(inv: CallState, t: BreakerTransition): void {
  if (inv.engine.listening) inv.engine.emit(breakerStateEvent(inv.policyName, inv.route, t));
}

/**
 * Reports a breaker outcome to the store that admitted the permit (`local`: the in-process one, after a fail-open).
 * A remote store is not awaited: the call's result is already known.
 */
export function recordBreaker(
  inv: CallState,
  local: boolean,
  permit: BreakerPermit,
  outcome: BreakerOutcome,
  now: number,
): void {
  const e = inv.engine;
  const store = local ? e.breakerLocal : e.breakerStore;
  let r: BreakerRecordResult | Promise<BreakerRecordResult>;
  try {
    r = store.record(inv.ks.key, inv.pr.breakerParams!, permit, outcome, now);
  } catch (err) {
    return storeFailed(inv, err);
  }
  if (isPromiseLike(r))
    r.then(
      (v) => recorded(inv, v),
      (err: unknown) => storeFailed(inv, err),
    );
  else recorded(inv, r);
}

function recorded(inv: CallState, r: BreakerRecordResult): void {
  inv.ks.sawBreaker(r.state);
  if (r.transition !== undefined) breakerTransition(inv, r.transition);
}

function storeFailed(inv: CallState, err: unknown): void {
  const e = inv.engine;
  if (e.listening)
    e.emit({
      type: 'store_degraded',
      policy: inv.policyName,
      route: inv.route,
      store: 'circuitBreaker',
      error: err,
    });
}
