import { Criticality } from '@ballast/codel';
import { contextStorage } from '../context/context-storage';
import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import { retryAfterOf } from '../errors/classify';
import { outcomeClass, type OutcomeClass } from '../errors/outcome-class';
import { isParked, type Admission, type ParkedAdmission } from '../bulkhead';
import type { BreakerAdmission, RateLimitResult } from '../stores/ports';
import type { StoreName } from '../events';
import { AttemptContext } from './attempt-context';
import { isPromiseLike } from './engine';
import type { Invocation } from './invocation';
import type { Lane } from './lane';
import { REJECTION_CODES, rejection } from './rejections';
import { TimerEntry } from './timer-queue';

/**
 * The pipeline of one lane, outer → inner: rate limit → bulkhead → circuit breaker | adaptive throttle → retry →
 * timeout (SPEC §4). Each stage is skipped at no cost when the policy lacks it; store calls are awaited only when
 * the store answers with a promise. Returns true with `lane.value`, or false with `lane.error`.
 */
export async function runPipeline(inv: Invocation, lane: Lane): Promise<boolean> {
  const e = inv.engine;
  const pr = inv.pr;
  const ks = inv.ks;
  // One clock read serves every synchronous admission step (clock reads are a visible share of the hot path).
  let now = e.clock.now();

  // 1. Rate limit: rejects at once, before a bulkhead slot or a breaker outcome is touched.
  const rp = pr.rateParams;
  if (rp !== undefined) {
    let r: RateLimitResult | Promise<RateLimitResult> | undefined;
    if (e.rateStore === e.rateLocal) r = e.rateLocal.take(ks.key, rp, now);
    else {
      r = await remote(inv, lane, e.rateStore, e.rateLocal, 'rateLimit', (s) =>
        s.take(ks.key, rp, e.clock.now()),
      );
      if (r === undefined) return false;
      now = e.clock.now();
    }
    if (isPromiseLike(r)) r = await r;
    if (!r.ok) return reject(inv, lane, 'throttled', ErrorCode.RATE_LIMITED, r.retryAfter);
    if (lane.cancelled) return cancelled(lane);
  }

  // 2. Bulkhead: a free slot is taken synchronously; otherwise the lane parks (interruptibly) or is refused.
  const bh = ks.bulkhead;
  let admittedAt = 0;
  if (bh !== undefined) {
    let a: Admission | ParkedAdmission = bh.acquire(inv.criticality ?? Criticality.NORMAL, inv.deadline);
    if (a !== true) {
      if (isParked(a)) {
        const parked = await park(lane, a);
        if (parked === undefined) return cancelled(lane);
        a = parked;
      }
      if (a !== true) return refuse(inv, lane, a);
      now = e.clock.now();
    }
    admittedAt = now;
  }

  // Everything below holds the bulkhead slot (if any); the finally block gives back exactly what was taken.
  let ok = false;
  let breaker: { local: boolean; generation: number; lease: string | undefined } | undefined;
  let throttled = false;
  try {
    // 3. Circuit breaker or adaptive throttle around the retry loop: one logical call is one outcome.
    const bp = pr.breakerParams;
    const throttle = ks.throttle;
    if (bp !== undefined) {
      let local = e.breakerStore === e.breakerLocal;
      let adm: BreakerAdmission | Promise<BreakerAdmission> | undefined;
      if (local) adm = e.breakerLocal.acquire(ks.key, bp, now);
      else {
        lane.degraded = false;
        adm = await remote(
          inv,
          lane,
          e.breakerStore,
          e.breakerLocal,
          'circuitBreaker',
          (s) => s.acquire(ks.key, bp, e.clock.now()),
          // a probe lease granted after the lane was cancelled is handed straight back
          (late) => {
            if (late.admitted && late.lease !== undefined) inv.recordBreaker(false, late, 'release');
          },
        );
        if (adm === undefined) return false;
        local = lane.degraded;
      }
      if (isPromiseLike(adm)) adm = await adm;
      if (adm.transition !== undefined) inv.breakerTransition(adm.transition.from, adm.transition.to);
      ks.breakerState = adm.state;
      if (!adm.admitted) return reject(inv, lane, 'infrastructure', ErrorCode.CIRCUIT_OPEN, adm.retryAfter);
      breaker = { local, generation: adm.generation, lease: adm.lease };
      if (lane.cancelled) return cancelled(lane);
    } else if (throttle !== undefined) {
      const p = throttle.rejectionProbability(now);
      if (p > 0 && throttle.shouldReject(now, e.random())) {
        if (e.listening)
          e.emit({ type: 'throttle_reject', policy: inv.policyName, route: inv.route, probability: p });
        return reject(inv, lane, 'throttled', ErrorCode.ADAPTIVE_THROTTLE, undefined);
      }
      throttled = true;
    }

    // 4. Retry inside the breaker; never sleeps past the deadline; honours a longer `retryAfter` of throttled errors.
    const retry = inv.pr.policy.retry?.options;
    let previousDelay = 0;
    for (let attempt = 1; ; attempt++) {
      const r = runAttempt(inv, lane, attempt);
      if (r === true || (r !== false && (await r))) return (ok = true);
      if (lane.cancelled || retry === undefined || attempt >= retry.maxAttempts) return false;
      const kind = e.classify(lane.error);
      if (!retry.retryOn.includes(kind as never)) return false;
      const budget = ks.retryBudget;
      if (budget !== undefined && !budget.tryWithdraw()) return false;
      let delay = retry.backoff.delay(attempt, previousDelay, e.random);
      previousDelay = delay;
      // A throttled error's hint, and the one on Ballast's own rejections (a nested call's open circuit): waiting
      // less would only hit the same refusal again.
      if (
        kind === 'throttled' ||
        (lane.error instanceof ResilienceError && REJECTION_CODES.has(lane.error.code))
      ) {
        const hint = retryAfterOf(lane.error);
        if (hint !== undefined && hint > delay) delay = hint;
      }
      if (inv.deadline !== undefined && e.clock.now() + delay >= inv.deadline) return false;
      if (e.listening) {
        e.emit({
          type: 'retry',
          policy: inv.policyName,
          route: inv.route,
          attempt: attempt + 1,
          delay,
          error: lane.error,
        });
      }
      if (delay > 0 && !(await sleep(inv, lane, delay))) return false;
    }
  } finally {
    if (breaker !== undefined || throttled || bh !== undefined) {
      const cls = classOf(inv, lane, ok);
      if (breaker !== undefined) {
        inv.recordBreaker(
          breaker.local,
          breaker,
          cls === 'failure' ? 'failure' : cls === 'healthy' ? 'success' : 'release',
        );
      }
      if (throttled && cls !== 'cancelled') ks.throttle!.record(e.clock.now(), cls === 'healthy');
      if (bh !== undefined) {
        bh.release(
          e.clock.now() - admittedAt,
          cls === 'healthy' ? 'success' : cls === 'failure' ? 'failure' : 'neutral',
        );
      }
    }
  }
}

/** One attempt under its timeout; settles at once on timeout or cancellation even if `fn` ignores its signal. */
function runAttempt(inv: Invocation, lane: Lane, attempt: number): boolean | Promise<boolean> {
  // A cancellation that landed while no wait was registered (right after a bulkhead grant or a backoff timer, or
  // from an event listener) would never wake this attempt: never start fn with a live signal on a cancelled lane.
  if (lane.cancelled) return cancelled(lane);
  const e = inv.engine;
  lane.attempts = attempt;
  lane.rejected = false;
  const ctx = new AttemptContext(
    attempt,
    inv.policyName,
    inv.route,
    inv.frameDeadline,
    inv.frameClock,
    inv.criticality,
  );
  lane.ctx = ctx;
  let r: unknown;
  try {
    r = e.ambientContext ? contextStorage.run(ctx, inv.fn, ctx) : inv.fn(ctx);
  } catch (err) {
    lane.error = err;
    return false;
  }
  if (!isPromiseLike(r)) {
    lane.value = r;
    return true;
  }
  const timeout = inv.pr.policy.timeout?.options.timeout;
  if (timeout === undefined && !inv.cancellable) return awaitPlain(lane, r);
  return new Promise<boolean>((resolve) => {
    let done = false;
    let entry: TimerEntry | undefined;
    if (timeout !== undefined) {
      entry = new TimerEntry(() => {
        if (done) return;
        done = true;
        lane.wake = undefined;
        const err = inv.attemptTimeout(attempt, timeout);
        ctx.abort(err);
        lane.error = err;
        resolve(false);
      });
    }
    if (inv.cancellable) {
      lane.wake = (reason) => {
        if (done) return;
        done = true;
        if (entry !== undefined) e.timers.cancel(entry);
        lane.error = reason;
        resolve(false);
      };
    }
    r.then(
      (v) => {
        if (done) return;
        done = true;
        lane.wake = undefined;
        if (entry !== undefined) e.timers.cancel(entry);
        lane.value = v;
        resolve(true);
      },
      (err: unknown) => {
        if (done) return;
        done = true;
        lane.wake = undefined;
        if (entry !== undefined) e.timers.cancel(entry);
        lane.error = err;
        resolve(false);
      },
    );
    // Added after `then`, so an already-settled result cancels the entry before the queue arms its clock timer.
    if (entry !== undefined) e.timers.add(entry, timeout!);
  });
}

async function awaitPlain(lane: Lane, r: PromiseLike<unknown>): Promise<boolean> {
  try {
    lane.value = await r;
    return true;
  } catch (err) {
    lane.error = err;
    return false;
  }
}

/** Backoff sleep on the Resilience clock, ended early (false) by a cancellation. */
function sleep(inv: Invocation, lane: Lane, ms: number): Promise<boolean> {
  if (lane.cancelled) return Promise.resolve(false);
  const clock = inv.engine.clock;
  return new Promise<boolean>((resolve) => {
    const h = clock.setTimeout(() => {
      lane.wake = undefined;
      resolve(true);
    }, ms);
    lane.wake = () => {
      clock.clearTimeout(h);
      resolve(false);
    };
  });
}

/** Waits in the bulkhead queue; undefined when the lane was cancelled (the waiter has left the queue). */
function park(lane: Lane, parked: ParkedAdmission): Promise<Admission | undefined> {
  if (lane.cancelled) {
    parked.cancel();
    return Promise.resolve(undefined);
  }
  return new Promise<Admission | undefined>((resolve) => {
    lane.wake = () => {
      parked.cancel();
      resolve(undefined);
    };
    parked.result.then((a) => {
      lane.wake = undefined;
      resolve(a);
    });
  });
}

/**
 * A call to a configured (possibly remote) store. When it throws or rejects, `failOpenOnStoreError` decides: admit
 * with the in-process store (and emit `store_degraded`), or refuse with `resilience_store_unavailable` (SPEC §5).
 */
async function remote<S, T>(
  inv: Invocation,
  lane: Lane,
  store: S,
  local: S,
  name: StoreName,
  op: (s: S) => T | Promise<T>,
  late?: (value: T) => void,
): Promise<T | undefined> {
  try {
    const r = op(store);
    if (!isPromiseLike(r)) return r;
    const v = await storeWait(lane, r, late);
    if (v !== CANCELLED) return v;
    cancelled(lane);
    return undefined;
  } catch (err) {
    const e = inv.engine;
    if (e.listening)
      e.emit({ type: 'store_degraded', policy: inv.policyName, route: inv.route, store: name, error: err });
    if (inv.pr.policy.failOpenOnStoreError) {
      lane.degraded = true;
      return op(local);
    }
    refuse(
      inv,
      lane,
      rejection('infrastructure', ErrorCode.STORE_UNAVAILABLE, inv.policyName, inv.route, undefined, err),
    );
    return undefined;
  }
}

const CANCELLED: unique symbol = Symbol('cancelled');

/**
 * Awaits a store's answer unless the lane is cancelled first: a hanging store (a Redis without a command timeout)
 * must not hold a caller abort, a deadline or a lost hedge. An answer arriving after that goes to `late`; a late
 * failure is swallowed.
 */
function storeWait<T>(
  lane: Lane,
  answer: PromiseLike<T>,
  late: ((value: T) => void) | undefined,
): Promise<T | typeof CANCELLED> {
  if (lane.cancelled) {
    answer.then(late, () => undefined);
    return Promise.resolve(CANCELLED);
  }
  return new Promise<T | typeof CANCELLED>((resolve, reject) => {
    let done = false;
    lane.wake = () => {
      done = true;
      resolve(CANCELLED);
    };
    answer.then(
      (v) => {
        if (done) return late?.(v);
        lane.wake = undefined;
        resolve(v);
      },
      (err: unknown) => {
        if (done) return;
        lane.wake = undefined;
        reject(err);
      },
    );
  });
}

function classOf(inv: Invocation, lane: Lane, ok: boolean): OutcomeClass {
  if (ok) return 'healthy';
  if (lane.cancelled) return 'cancelled';
  // Ballast's own rejections are neither health nor failure of the dependency.
  if (lane.rejected) return 'overload';
  return outcomeClass(inv.engine.classify(lane.error), false);
}

function cancelled(lane: Lane): false {
  lane.error = lane.cancelReason;
  return false;
}

function reject(
  inv: Invocation,
  lane: Lane,
  kind: 'throttled' | 'infrastructure',
  code: string,
  retryAfter: number | undefined,
): false {
  return refuse(inv, lane, rejection(kind, code, inv.policyName, inv.route, retryAfter));
}

/** Records a Ballast rejection (a value, not a throw) and emits `rejected` once. */
function refuse(inv: Invocation, lane: Lane, error: ResilienceError): false {
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
