import { CONTEXT_FRAMES, runInFrame } from '../context/context-storage';
import {
  EXCEPTION_KINDS,
  ErrorCode,
  ResilienceError,
  isOwnResilienceError,
  type ExceptionKind,
} from '../errors/resilience-error';
import type { ResultVerdict } from '../errors/classify-result';
import { classifiedResult } from './classified-result';
import { retryAfterOf } from '../errors/classify';
import { AttemptContext } from './attempt-context';
import { callWithChaos } from './chaos';
import { isPromiseLike } from './engine';
import type { CallState } from './call-state';
import type { Lane } from './lane';
import { cancelled, crash, detach, end, resumeSoon } from './pass-end';
import { REJECTION_CODES } from './rejections';
import { TimerEntry } from './timer-queue';

/**
 * Attempt `n` of a lane under its timeout, then the retry decision (SPEC §4: retry inside the breaker, never past
 * the deadline, honouring a longer `retryAfter` of throttled errors). Settles at once on timeout or cancellation,
 * even if `fn` ignores its signal.
 */
export function attempt(inv: CallState, lane: Lane, n: number, now?: number): void {
  // A loop, not recursion: synchronous outcomes retried at once (a zero backoff) must not grow the stack.
  for (let next = n; next > 0; now = undefined) next = attemptOnce(inv, lane, next, now);
}

/** Runs attempt `n`; returns the attempt to run at once (a synchronous outcome retried without delay), else 0. */
function attemptOnce(inv: CallState, lane: Lane, n: number, now: number | undefined): number {
  // A cancellation that landed while no wait was registered (right after a bulkhead grant or a backoff timer, or
  // from an event listener) would never wake this attempt: never start fn with a live signal on a cancelled lane.
  if (lane.cancelled) {
    end(inv, lane, cancelled(lane));
    return 0;
  }
  const e = inv.engine;
  lane.attempts = n;
  lane.rejected = false;
  const ctx = new AttemptContext(
    n,
    inv.policyName,
    inv.route,
    inv.frameDeadline,
    inv.frameClock,
    inv.criticality,
  );
  lane.ctx = ctx;
  // A detached lane (shadow mode) runs fn bare: no timeout.
  const timeout = lane.detached ? undefined : inv.pr.policy.timeout?.options.timeout;
  // On Node 24 the timeout's entry is created before fn runs, in the same context it would be after, so that its async
  // scope can serve the attempt's frame too (runInFrame: one AsyncResource per attempt, not two). Elsewhere `run`
  // needs no scope, and the entry is created only once fn's result is known to be pending.
  const timer = timeout !== undefined && inv.framed && CONTEXT_FRAMES ? new AttemptTimer() : undefined;
  let r: unknown;
  try {
    r =
      inv.pr.chaosArmed !== undefined
        ? callWithChaos(inv, ctx)
        : inv.framed
          ? runInFrame(ctx, inv.fn, ctx, timer)
          : inv.fn(ctx);
  } catch (err) {
    lane.error = err;
    return afterAttempt(inv, lane, false);
  }
  if (!isPromiseLike(r)) {
    lane.value = r;
    return afterAttempt(inv, lane, true);
  }
  const w = new AttemptWatch(inv, lane, ctx, timeout);
  if (inv.cancellable) lane.wake = (reason) => w.cancel(reason);
  r.then(
    (v) => w.settle(true, v),
    (err: unknown) => w.settle(false, err),
  );
  // A cancellation that landed while fn ran synchronously (fn, or something it called, aborted the caller's signal;
  // another hedged lane's fn did) found no wait to end: end this one now, never wait for the promise fn returned.
  if (lane.cancelled) {
    w.cancel(lane.cancelReason);
    return 0;
  }
  // Added after `then`, so an already-settled result cancels the entry before the queue arms its clock timer; a
  // thenable that called back inside `then` has already settled, and needs no timeout at all.
  // `now` is the admission's clock read when attempt 1 starts in the same synchronous run (one read fewer).
  if (timeout !== undefined && w.open) {
    const t = timer ?? new AttemptTimer();
    t.watch = w;
    e.timers.add((w.timer = t), timeout, now);
  }
  return 0;
}

/**
 * The wait of one asynchronous attempt: its result, its timeout (an entry of the shared timer queue) or a
 * cancellation, whichever comes first; the others are then ignored.
 */
class AttemptWatch {
  #open = true;
  /** The attempt's entry in the shared timer queue, when the policy has a timeout. */
  timer: AttemptTimer | undefined = undefined;

  /** Neither settled, timed out nor cancelled yet. */
  get open(): boolean {
    return this.#open;
  }

  constructor(
    readonly inv: CallState,
    readonly lane: Lane,
    readonly ctx: AttemptContext,
    readonly timeout: number | undefined,
  ) {}

  settle(ok: boolean, result: unknown): void {
    if (!this.#close()) return;
    if (ok) this.lane.value = result;
    else this.lane.error = result;
    resumeAfterAttempt(this.inv, this.lane, ok);
  }

  /** The timeout: the attempt's signal is aborted with the `attempt_timeout` error, which the attempt fails with. */
  expire(): void {
    if (!this.#open) return;
    if (this.inv.shadow) return this.#shadowExpire();
    this.#open = false;
    this.lane.wake = undefined;
    const err = this.inv.attemptTimeout(this.lane.attempts, this.timeout!);
    this.ctx.abort(err);
    this.lane.error = err;
    resumeSoon(this.inv, this.lane, () => continueAfter(this.inv, this.lane, false));
  }

  /**
   * Shadow mode: reported, not enforced. The strategies hear the timeout now — the retry enforce mode would make is
   * reported, the pass ends as it would (detached) — while the attempt runs on, its signal live, and the call ends
   * with fn's own result.
   */
  #shadowExpire(): void {
    const { inv, lane } = this;
    this.timer = undefined;
    lane.error = inv.attemptTimeout(lane.attempts, this.timeout!);
    lane.awaitingResult = true;
    try {
      afterAttempt(inv, lane, false);
    } catch {
      // a user `classify` that throws while judging: the call's own end reports it
    }
    lane.awaitingResult = false;
  }

  cancel(reason: unknown): void {
    if (!this.#close()) return;
    this.lane.error = reason;
    resumeSoon(this.inv, this.lane, () => continueAfter(this.inv, this.lane, false));
  }

  #close(): boolean {
    if (!this.#open) return false;
    this.#open = false;
    this.lane.wake = undefined;
    if (this.timer !== undefined) this.inv.engine.timers.cancel(this.timer);
    return true;
  }
}

/** The timeout of one attempt; it fires in the context the attempt's wait began in (see TimerEntry). */
class AttemptTimer extends TimerEntry {
  /** Set before the entry is queued. */
  watch: AttemptWatch | undefined = undefined;

  override fire(): void {
    this.watch!.expire();
  }
}

function resumeAfterAttempt(inv: CallState, lane: Lane, ok: boolean): void {
  try {
    continueAfter(inv, lane, ok);
  } catch (err) {
    crash(inv, lane, err);
  }
}

/** The retry decision for an asynchronous outcome, then the next attempt if it is due at once. */
function continueAfter(inv: CallState, lane: Lane, ok: boolean): void {
  const next = afterAttempt(inv, lane, ok);
  if (next > 0) attempt(inv, lane, next);
}

/** Ends the pass, schedules a backoff sleep (0), or returns the attempt to run at once. */
function afterAttempt(inv: CallState, lane: Lane, ok: boolean): number {
  // Shadow mode, after the strategies' pass ended: the call ends with fn's own outcome.
  if (lane.detached) return stop(inv, lane, ok);
  if (ok) {
    const classifier = inv.pr.policy.classifyResult;
    if (classifier === undefined || !classifiedFailure(inv, lane, classifier)) return stop(inv, lane, true);
    // A verdict of `internal` / callback_failed (the classifier threw) ends the call; any other is retried as its kind.
    if (isOwnResilienceError(lane.error) && lane.error.code === ErrorCode.CALLBACK_FAILED)
      return stop(inv, lane, false);
  }
  const e = inv.engine;
  const retry = inv.pr.policy.retry?.options;
  const n = lane.attempts;
  if (lane.cancelled || retry === undefined || n >= retry.maxAttempts) return stop(inv, lane, false);
  const kind = e.classify(lane.error);
  if (!retry.retryOn.includes(kind as never)) return stop(inv, lane, false);
  let delay = retry.delay === undefined ? undefined : customDelay(inv, lane, retry.delay, n);
  if (delay === null) return stop(inv, lane, false);
  delay ??= retry.backoff.delay(n, lane.previousDelay, e.random);
  lane.previousDelay = delay;
  // A throttled error's hint, and the one on Ballast's own rejections (a nested call's open circuit): waiting
  // less would only hit the same refusal again. A hint beyond the backoff's `max` — the longest this policy sleeps
  // between attempts — ends the retries with the real error (its hint intact for the caller), as a deadline does:
  // a far-future Retry-After (an HTTP-date a year ahead, an infinite `retryAfter`) must not park the call.
  if (kind === 'throttled' || (isOwnResilienceError(lane.error) && REJECTION_CODES.has(lane.error.code))) {
    const hint = retryAfterOf(lane.error);
    if (hint !== undefined && hint > delay) {
      if (!(hint <= retry.backoff.options.max)) return stop(inv, lane, false);
      delay = hint;
    }
  }
  if (!(delay < Infinity)) return stop(inv, lane, false);
  if (inv.deadline !== undefined && e.clock.now() + delay >= inv.deadline) return stop(inv, lane, false);
  // Withdrawn last: a retry the deadline rules out spends no token.
  const budget = inv.ks.retryBudget;
  if (budget !== undefined && !budget.tryWithdraw()) return stop(inv, lane, false);
  if (e.listening) {
    const event = {
      type: 'retry',
      policy: inv.policyName,
      route: inv.route,
      attempt: n + 1,
      delay,
      error: lane.error,
    } as const;
    e.emit(inv.shadow ? { ...event, shadow: true } : event);
  }
  // Shadow mode reports the retry it decided on, and runs no other attempt.
  if (inv.shadow) return stop(inv, lane, false);
  if (delay <= 0) return n + 1;
  if (lane.cancelled) return stop(inv, lane, false);
  // Backoff sleep on the Resilience clock, ended early by a cancellation.
  const clock = e.clock;
  const h = clock.setTimeout(() => {
    lane.wake = undefined;
    resumeSoon(inv, lane, () => attempt(inv, lane, n + 1));
  }, delay);
  lane.wake = () => {
    clock.clearTimeout(h);
    resumeSoon(inv, lane, () => end(inv, lane, false));
  };
  return 0;
}

/**
 * The retry's own `delay` function: its number wins over the backoff, `undefined` defers to it. A throw or an answer
 * that is no delay (negative, NaN, not a number) fails the call with `internal` / `callback_failed` and answers
 * `null`: a bug in the user's policy must show, not turn into an unhandled rejection or a retry storm.
 */
function customDelay(
  inv: CallState,
  lane: Lane,
  fn: (attempt: number, error: unknown) => number | undefined,
  n: number,
): number | undefined | null {
  let d: unknown;
  try {
    d = fn(n, lane.error);
  } catch (err) {
    lane.error = callbackFailed(inv, 'RetryStrategy delay threw', err);
    return null;
  }
  if (d === undefined || (typeof d === 'number' && d >= 0)) return d;
  const answer = typeof d === 'number' ? String(d) : typeof d;
  lane.error = callbackFailed(inv, `RetryStrategy delay answered ${answer}`, lane.error);
  return null;
}

/**
 * Asks the policy's `classifyResult` about a successful attempt's value: a verdict turns it into a failure of that
 * kind (the value kept on the error, so a call ending on it resolves with it); a throw or a malformed verdict fails
 * the call with `internal` / `callback_failed`. Returns whether the attempt now counts as failed.
 */
function classifiedFailure(
  inv: CallState,
  lane: Lane,
  classifier: (result: unknown) => ResultVerdict | undefined,
): boolean {
  let verdict: unknown;
  try {
    verdict = classifier(lane.value);
  } catch (err) {
    lane.error = callbackFailed(inv, 'classifyResult threw', err, '');
    return true;
  }
  if (verdict === undefined) return false;
  const v = verdict as Partial<ResultVerdict> | null;
  const retryAfter = v?.retryAfter;
  if (
    v === null ||
    typeof v !== 'object' ||
    !EXCEPTION_KINDS.includes(v.kind as ExceptionKind) ||
    (retryAfter !== undefined && !(typeof retryAfter === 'number' && retryAfter >= 0))
  ) {
    lane.error = callbackFailed(inv, 'classifyResult answered a malformed verdict', verdict, '');
    return true;
  }
  lane.error = classifiedResult(inv, v.kind!, retryAfter, lane.value);
  return true;
}

function callbackFailed(
  inv: CallState,
  what: string,
  cause: unknown,
  expected = '; expected a number of ms ≥ 0 or undefined',
): ResilienceError {
  return new ResilienceError({
    kind: 'internal',
    code: ErrorCode.CALLBACK_FAILED,
    message: `${what}${expected}`,
    cause,
    policy: inv.policyName,
    ...(inv.route === undefined ? {} : { route: inv.route }),
  });
}

function stop(inv: CallState, lane: Lane, ok: boolean): 0 {
  // Shadow mode, at a timeout: the strategies' pass ends here; the call waits on for fn.
  if (lane.awaitingResult) detach(inv, lane);
  else end(inv, lane, ok);
  return 0;
}
