import { Criticality } from '@ballast/codel';
import { ErrorCode, type ResilienceError } from '../errors/resilience-error';
import { isParked, type Admission, type ParkedAdmission } from '../bulkhead';
import type { BreakerAdmission, RateLimitResult } from '../stores/ports';
import type { StoreName } from '../events';
import { attempt } from './attempts';
import { isPromiseLike } from './engine';
import type { CallState } from './call-state';
import { breakerTransition, recordBreaker } from './breaker-outcome';
import type { Lane, PassDone } from './lane';
import { cancelled, crash, detach, end, refuse, resumeSoon } from './pass-end';
import { rejection } from './rejections';

/**
 * The pipeline of one lane, outer → inner: rate limit → bulkhead → circuit breaker | adaptive throttle → retry →
 * timeout (SPEC §4). Each stage is skipped at no cost when the policy lacks it.
 *
 * Written in continuation-passing style rather than as an async function: with in-process stores every admission
 * step is synchronous, and the only promise work of a call is the user function's own promise plus the one the
 * caller awaits. Each `async` layer would add a promise and a microtask hop per call — and on Node 20, once
 * AsyncLocalStorage is on, a promise hook per promise (peer-overhead.md §5). `done(ok, lane)` is called exactly
 * once, after everything the pass took is given back.
 */
export function runPass(inv: CallState, lane: Lane, done: PassDone, now = inv.engine.clock.now()): void {
  lane.done = done;
  try {
    admitRate(inv, lane, now);
  } catch (err) {
    crash(inv, lane, err);
  }
}

/** The pass as a promise of its `ok` (hedging races several). */
export function runPipeline(inv: CallState, lane: Lane): Promise<boolean> {
  return new Promise<boolean>((resolve) => runPass(inv, lane, resolve));
}

/** 1. Rate limit: rejects at once, before a bulkhead slot or a breaker outcome is touched. */
function admitRate(inv: CallState, lane: Lane, now: number): void {
  const e = inv.engine;
  const rp = inv.pr.rateParams;
  if (rp === undefined) return admitBulkhead(inv, lane, now);
  const key = inv.ks.key;
  if (e.rateStore === e.rateLocal) return afterRate(inv, lane, e.rateLocal.take(key, rp, now), now);
  remote(
    inv,
    lane,
    e.rateStore,
    e.rateLocal,
    'rateLimit',
    (s) => s.take(key, rp, e.clock.now()),
    undefined,
    (r) => afterRate(inv, lane, r, e.clock.now()),
  );
}

function afterRate(
  inv: CallState,
  lane: Lane,
  r: RateLimitResult | Promise<RateLimitResult>,
  now: number,
): void {
  if (isPromiseLike(r)) return later(inv, lane, r, (v) => afterRate(inv, lane, v, inv.engine.clock.now()));
  if (!r.ok) {
    const err = rejection('throttled', ErrorCode.RATE_LIMITED, inv.policyName, inv.route, r.retryAfter);
    return refuseOr(inv, lane, err);
  }
  if (lane.cancelled) return end(inv, lane, cancelled(lane));
  admitBulkhead(inv, lane, now);
}

/** 2. Bulkhead: a free slot is taken synchronously; otherwise the lane parks (interruptibly) or is refused. */
function admitBulkhead(inv: CallState, lane: Lane, now: number): void {
  const bh = inv.ks.bulkhead;
  if (bh === undefined) return admitBreaker(inv, lane, now);
  const a = bh.acquire(inv.criticality ?? Criticality.NORMAL, inv.deadline);
  if (a === true) return holdSlot(inv, lane, now);
  if (isParked(a)) return inv.shadow ? shadowPark(inv, lane, a, now) : park(inv, lane, a);
  refuseOr(inv, lane, a);
}

/**
 * Shadow mode: the call does not wait for a slot, but its place in the queue is kept while it runs, so the queue
 * fills, sheds and times out as it would in enforce mode, and later arrivals are judged against it. A grant while
 * the call runs makes it hold the slot from then on; a refusal is reported; the end of the call leaves the queue.
 */
function shadowPark(inv: CallState, lane: Lane, parked: ParkedAdmission, now: number): void {
  lane.shadowPark = parked;
  parked.result.then((a: Admission) => {
    if (lane.shadowPark !== parked) return; // the pass ended or detached first (cancel() gave back any slot)
    lane.shadowPark = undefined;
    if (a === true) {
      lane.holdsSlot = true;
      lane.admittedAt = inv.engine.clock.now();
    } else inv.shadowRejected(a);
  });
  admitBreaker(inv, lane, now);
}

function holdSlot(inv: CallState, lane: Lane, now: number): void {
  lane.holdsSlot = true;
  lane.admittedAt = now;
  admitBreaker(inv, lane, now);
}

/** Waits in the bulkhead queue; a cancellation leaves the queue at once (the waiter then owns nothing). */
function park(inv: CallState, lane: Lane, parked: ParkedAdmission): void {
  if (lane.cancelled) {
    parked.cancel();
    return end(inv, lane, cancelled(lane));
  }
  let waiting = true;
  lane.wake = () => {
    waiting = false;
    parked.cancel();
    resumeSoon(inv, lane, () => end(inv, lane, cancelled(lane)));
  };
  parked.result.then((a: Admission) => {
    if (!waiting) return; // cancelled meanwhile (cancel() gave back any slot)
    waiting = false;
    lane.wake = undefined;
    try {
      if (a === true) holdSlot(inv, lane, inv.engine.clock.now());
      else end(inv, lane, refuse(inv, lane, a));
    } catch (err) {
      crash(inv, lane, err);
    }
  });
}

/** 3. Circuit breaker or adaptive throttle around the retry loop: one logical call is one outcome. */
function admitBreaker(inv: CallState, lane: Lane, now: number): void {
  const e = inv.engine;
  const bp = inv.pr.breakerParams;
  if (bp !== undefined) {
    const key = inv.ks.key;
    if (e.breakerStore === e.breakerLocal)
      return afterBreaker(inv, lane, e.breakerLocal.acquire(key, bp, now), true, now);
    lane.degraded = false;
    return remote(
      inv,
      lane,
      e.breakerStore,
      e.breakerLocal,
      'circuitBreaker',
      (s) => s.acquire(key, bp, e.clock.now()),
      // a probe lease granted after the lane was cancelled is handed straight back
      (late) => {
        if (late.admitted && late.lease !== undefined)
          recordBreaker(inv, false, late, 'release', e.clock.now());
      },
      (adm) => afterBreaker(inv, lane, adm, lane.degraded, undefined),
    );
  }
  const throttle = inv.ks.throttle;
  if (throttle !== undefined) {
    const p = throttle.rejectionProbability(now);
    if (p > 0 && throttle.shouldReject(now, e.random())) {
      const shadow = inv.shadow;
      if (e.listening) {
        const event = {
          type: 'throttle_reject',
          policy: inv.policyName,
          route: inv.route,
          probability: p,
        } as const;
        e.emit(shadow ? { ...event, shadow } : event);
      }
      const err = rejection('throttled', ErrorCode.ADAPTIVE_THROTTLE, inv.policyName, inv.route);
      return refuseOr(inv, lane, err);
    }
    lane.holdsThrottle = true;
  }
  attempt(inv, lane, 1, now);
}

function afterBreaker(
  inv: CallState,
  lane: Lane,
  adm: BreakerAdmission | Promise<BreakerAdmission>,
  local: boolean,
  now: number | undefined,
): void {
  if (isPromiseLike(adm)) return later(inv, lane, adm, (v) => afterBreaker(inv, lane, v, local, undefined));
  if (adm.transition !== undefined) breakerTransition(inv, adm.transition);
  inv.ks.sawBreaker(adm.state);
  if (!adm.admitted) {
    const err = rejection(
      'infrastructure',
      ErrorCode.CIRCUIT_OPEN,
      inv.policyName,
      inv.route,
      adm.retryAfter,
    );
    return refuseOr(inv, lane, err);
  }
  lane.holdsPermit = true;
  lane.generation = adm.generation;
  lane.lease = adm.lease;
  lane.permitLocal = local;
  if (lane.cancelled) return end(inv, lane, cancelled(lane));
  attempt(inv, lane, 1, now);
}

/** Continues with a promised value (an in-process store that answered with a promise); a rejection fails the pass. */
function later<T>(inv: CallState, lane: Lane, p: PromiseLike<T>, k: (v: T) => void): void {
  p.then(
    (v) => {
      try {
        k(v);
      } catch (err) {
        crash(inv, lane, err);
      }
    },
    (err: unknown) => crash(inv, lane, err),
  );
}

/**
 * A call to a configured (possibly remote) store. When it throws or rejects, `failOpenOnStoreError` decides: admit
 * with the in-process store (and emit `store_degraded`), or refuse with `resilience_store_unavailable` (SPEC §5).
 * A hanging store (a Redis without a command timeout) must not hold a caller abort, a deadline or a lost hedge: a
 * cancellation ends the wait, an answer arriving after that goes to `late`, and a late failure is swallowed.
 */
function remote<S, T>(
  inv: CallState,
  lane: Lane,
  store: S,
  local: S,
  name: StoreName,
  op: (s: S) => T | Promise<T>,
  late: ((value: T) => void) | undefined,
  k: (value: T | Promise<T>) => void,
): void {
  let r: T | Promise<T>;
  try {
    r = op(store);
  } catch (err) {
    return storeFailed(inv, lane, local, name, op, k, err);
  }
  if (!isPromiseLike(r)) return k(r);
  if (lane.cancelled) {
    r.then(late, () => undefined);
    return end(inv, lane, cancelled(lane));
  }
  let waiting = true;
  lane.wake = () => {
    waiting = false;
    resumeSoon(inv, lane, () => end(inv, lane, cancelled(lane)));
  };
  r.then(
    (v) => {
      if (!waiting) return late?.(v);
      waiting = false;
      lane.wake = undefined;
      try {
        k(v);
      } catch (err) {
        crash(inv, lane, err);
      }
    },
    (err: unknown) => {
      if (!waiting) return;
      waiting = false;
      lane.wake = undefined;
      try {
        storeFailed(inv, lane, local, name, op, k, err);
      } catch (thrown) {
        crash(inv, lane, thrown);
      }
    },
  );
}

function storeFailed<S, T>(
  inv: CallState,
  lane: Lane,
  local: S,
  name: StoreName,
  op: (s: S) => T | Promise<T>,
  k: (value: T | Promise<T>) => void,
  err: unknown,
): void {
  const e = inv.engine;
  if (e.listening)
    e.emit({ type: 'store_degraded', policy: inv.policyName, route: inv.route, store: name, error: err });
  if (inv.pr.policy.failOpenOnStoreError) {
    lane.degraded = true;
    return k(op(local));
  }
  refuseOr(
    inv,
    lane,
    rejection('infrastructure', ErrorCode.STORE_UNAVAILABLE, inv.policyName, inv.route, undefined, err),
  );
}

/**
 * A refusal. In enforce mode it ends the pass; in shadow mode (SPEC §14.3) it is reported, the strategies' pass ends
 * as enforce mode would end it (what it holds is given back, judged a rejection), and fn runs bare.
 */
function refuseOr(inv: CallState, lane: Lane, error: ResilienceError): void {
  if (!inv.shadow) return end(inv, lane, refuse(inv, lane, error));
  inv.shadowRejected(error);
  lane.error = error;
  lane.rejected = true;
  detach(inv, lane);
  attempt(inv, lane, 1);
}

/** Shadow mode: a call refused before any strategy (forced open) runs fn bare, once; `done` gets its result. */
export function runBare(inv: CallState, lane: Lane, done: PassDone): void {
  lane.done = done;
  lane.detached = true;
  attempt(inv, lane, 1);
}
