import { runInFrame } from '../context/context-storage';
import type { Fallback, RunOptions } from '../resilience-types';
import { AttemptContext } from './attempt-context';
import type { CallState } from './call-state';
import { isPromiseLike } from './engine';

/** What the fallback stage reads and calls on the call it serves (`Invocation` implements it). */
export interface FallbackCall extends CallState {
  readonly opts: RunOptions<unknown>;
  /** Set when it was the deadline that ended the call. */
  readonly deadlineExpired: boolean;
  /** Settles the call with the fallback's value. */
  succeed(value: unknown): void;
  /** Settles the call with the fallback's failure (or the caller's abort reason). */
  fallbackFailed(error: unknown): void;
}

/**
 * The fallback, which wraps everything (SPEC §4): the per-call `fallback` of `run`, else the policy's, when `on`
 * (the policy's) includes the error's kind. Returns true when it takes over the end of the call — it then settles
 * it, with the fallback's value or failure — and false when the call ends on `error`. Shadow mode (SPEC §14.3)
 * reports the fallback it would run and runs none.
 */
export function tryFallback(call: FallbackCall, error: unknown): boolean {
  const e = call.engine;
  const policyFallback = call.pr.policy.fallback?.options;
  const fallback = (call.opts.fallback ?? policyFallback?.fallback) as Fallback<unknown> | undefined;
  if (fallback === undefined) return false;
  const kind = e.classify(error);
  const on = call.opts.fallback !== undefined ? undefined : policyFallback?.on;
  if (on !== undefined && !on.includes(kind)) return false;
  if (call.shadow) {
    if (e.listening)
      e.emit({ type: 'fallback', policy: call.policyName, route: call.route, error, kind, shadow: true });
    return false;
  }
  if (e.listening) e.emit({ type: 'fallback', policy: call.policyName, route: call.route, error, kind });
  let value: unknown;
  const cancelledBefore = call.callerCancelled;
  try {
    // Under its context, as an attempt's fn runs: `currentSignal()` inside it is its ctx.signal.
    const ctx = fallbackContext(call);
    value = call.framed ? runInFrame(ctx, (c) => fallback(error, c), ctx) : fallback(error, ctx);
  } catch (fallbackError) {
    call.fallbackFailed(fallbackError);
    return true;
  }
  if (!isPromiseLike(value)) {
    call.succeed(value);
    return true;
  }
  // The caller aborted while the fallback ran synchronously, when nothing waited to hear it: the call ends now with
  // the caller's reason (SPEC §11.14), and the fallback's promise is left to settle unheard.
  if (!cancelledBefore && call.callerCancelled) {
    value.then(undefined, ignore);
    call.fallbackFailed(call.cancelReason);
    return true;
  }
  interruptible(call, value).then(
    (v) => call.succeed(v),
    (fallbackError: unknown) => call.fallbackFailed(fallbackError),
  );
  return true;
}

/**
 * The last attempt's context — unless its signal was aborted for that attempt only (its timeout, a lost hedge):
 * the fallback is new work and gets a live signal. After a deadline the aborted context is the right one.
 */
function fallbackContext(call: FallbackCall): AttemptContext {
  const ctx = call.ctx;
  if (ctx !== undefined && (!ctx.aborted || call.callerCancelled)) return ctx;
  // Held as the lane's ctx, so a caller abort during the fallback aborts this signal too.
  return (call.ctx = new AttemptContext(
    call.attempts,
    call.policyName,
    call.route,
    call.frameDeadline,
    call.frameClock,
    call.criticality,
  ));
}

/**
 * Awaits a fallback's result, but settles at once when the caller aborts meanwhile (never waits for it) — also
 * when the deadline already ended the pipeline and the fallback runs past it: the caller can still go away then.
 */
function interruptible(call: FallbackCall, result: PromiseLike<unknown>): PromiseLike<unknown> {
  if (call.callerCancelled) {
    const signal = call.opts.signal;
    if (!call.deadlineExpired || signal === undefined || signal.aborted) return result;
  } else if (!call.cancellable) return result;
  return new Promise((resolve, reject) => {
    call.wake = reject;
    result.then(
      (v) => {
        call.wake = undefined;
        resolve(v);
      },
      (err: unknown) => {
        call.wake = undefined;
        reject(err);
      },
    );
  });
}

function ignore(): void {}
