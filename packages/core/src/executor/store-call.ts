import { ErrorCode } from '../errors/resilience-error';
import type { StoreName } from '../events';
import type { CallState } from './call-state';
import { isPromiseLike } from './engine';
import type { Lane } from './lane';
import { cancelled, crash, end, resumeSoon } from './pass-end';
import { rejection } from './rejections';
import { refuseOr } from './refusal';

/** Continues with a promised value (an in-process store that answered with a promise); a rejection fails the pass. */
export function later<T>(inv: CallState, lane: Lane, p: PromiseLike<T>, k: (v: T) => void): void {
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
export function remote<S, T>(
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
