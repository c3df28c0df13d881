import { ErrorCode, isOwnResilienceError, type ResilienceError } from '../errors/resilience-error';
import { outcomeClass, type OutcomeClass } from '../errors/outcome-class';
import type { CallState } from './call-state';
import { recordBreaker } from './breaker-outcome';
import type { Lane } from './lane';

/**
 * Ends a lane's pass once: gives back what it holds (breaker permit, throttle outcome, bulkhead slot — the `finally`
 * of an async pipeline) and calls its continuation. A second call is a no-op, so every path can simply end.
 */
export function end(inv: CallState, lane: Lane, ok: boolean): void {
  const done = lane.done;
  if (done === undefined) return;
  lane.done = undefined;
  if (lane.holdsPermit || lane.holdsThrottle || lane.holdsSlot || lane.shadowPark !== undefined) {
    try {
      giveBack(inv, lane, ok);
    } catch (err) {
      // a user `classify` threw while judging the outcome: the call fails with that error
      ok = false;
      lane.error = err;
    }
  }
  done(ok, lane);
}

/** What the pass holds, given back once, judged by `ok` and `lane.error`. */
function giveBack(inv: CallState, lane: Lane, ok: boolean): void {
  if (lane.shadowPark !== undefined) {
    lane.shadowPark.cancel();
    lane.shadowPark = undefined;
  }
  if (lane.holdsPermit || lane.holdsThrottle || lane.holdsSlot) release(inv, lane, ok);
}

/**
 * Shadow mode (SPEC §14.3): the strategies' pass ends here, failed with `lane.error`, exactly as enforce mode would
 * end it — what it holds is given back and judged — but the call goes on bare: `end` later delivers fn's own result.
 */
export function detach(inv: CallState, lane: Lane): void {
  if (lane.detached || lane.done === undefined) return;
  lane.detached = true;
  try {
    giveBack(inv, lane, false);
  } catch {
    // a user `classify` that throws is reported when the call ends, by its own outcome
  }
}

/** An unexpected throw inside the pass (a user `classify`, a custom backoff): the pass fails with it. */
export function crash(inv: CallState, lane: Lane, err: unknown): void {
  lane.error = err;
  end(inv, lane, false);
}

function release(inv: CallState, lane: Lane, ok: boolean): void {
  const e = inv.engine;
  const permit = lane.holdsPermit;
  const throttled = lane.holdsThrottle;
  const slot = lane.holdsSlot;
  lane.holdsPermit = lane.holdsThrottle = lane.holdsSlot = false;
  const cls = classOf(inv, lane, ok);
  const now = e.clock.now();
  if (permit) {
    recordBreaker(
      inv,
      lane.permitLocal,
      lane,
      cls === 'failure' ? 'failure' : cls === 'healthy' ? 'success' : 'release',
      now,
    );
  }
  if (throttled && cls !== 'cancelled') inv.ks.throttle!.record(now, cls === 'healthy');
  if (slot) {
    inv.ks.bulkhead!.release(
      now - lane.admittedAt,
      cls === 'healthy' ? 'success' : cls === 'failure' ? 'failure' : 'neutral',
    );
  }
}

function classOf(inv: CallState, lane: Lane, ok: boolean): OutcomeClass {
  if (ok) return 'healthy';
  if (lane.cancelled) return 'cancelled';
  // Ballast's own rejections are neither health nor failure of the dependency.
  if (lane.rejected) return 'overload';
  // A nested call that a deadline ended (its `deadline_exceeded`, rethrown by fn) spent a caller's budget, as when
  // the deadline cuts this call short: not the dependency's health. Which budget — this call's own (the nested
  // call's timer may well fire first: it converted the shared deadline later), a tighter one fn bound around it,
  // or another caller's, whose call fn joined (a coalesced request) — is not the breaker's question: a budget is
  // never a health signal. An attempt timeout, the policy's own bound, is one.
  const error = lane.error;
  if (isOwnResilienceError(error) && error.code === ErrorCode.DEADLINE_EXCEEDED) return 'cancelled';
  return outcomeClass(inv.engine.classify(error), false);
}

/** The lane was cancelled: its error is the cancellation reason. */
export function cancelled(lane: Lane): false {
  lane.error = lane.cancelReason;
  return false;
}

/** Records a Ballast rejection (a value, not a throw) and emits `rejected` once. */
export function refuse(inv: CallState, lane: Lane, error: ResilienceError): false {
  lane.error = error;
  lane.rejected = error.code !== ErrorCode.DEADLINE_EXCEEDED;
  const e = inv.engine;
  if (e.listening && lane.rejected) {
    e.emit({
      type: 'rejected',
      policy: inv.policyName,
      route: inv.route,
      code: error.code,
      ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
    });
  }
  return false;
}

/**
 * Continues the pass in a microtask. Used where a wait ends from outside a promise reaction — a cancellation (run
 * inside the caller's `abort()` or a hedge winner's settlement) or a timer — so the rest of the pass (releases,
 * retries, the fallback) never runs inside someone else's event dispatch, as it would not with `await`.
 */
export function resumeSoon(inv: CallState, lane: Lane, k: () => void): void {
  queueMicrotask(() => {
    try {
      k();
    } catch (err) {
      crash(inv, lane, err);
    }
  });
}
