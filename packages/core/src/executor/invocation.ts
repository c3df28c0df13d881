import { currentFrame } from '../context/context-storage';
import { ErrorCode, isOwnResilienceError, type ResilienceError } from '../errors/resilience-error';
import { stacklessError } from '../errors/stackless';
import type { CallOutcome } from '../events';
import type { Clock } from '../time/clock';
import type { CallContext, RunOptions } from '../resilience-types';
import { AMBIENT_SIGNAL } from './attempt-context';
import { tryFallback, type FallbackCall } from './call-fallback';
import type { Engine } from './engine';
import { runHedged } from './hedge';
import { Lane } from './lane';
import { runPass } from './pipeline';
import { runBare } from './refusal';
import { unwatchSignal, watchSignal, type SignalWatcher } from './signal-watch';
import type { KeyState, PolicyRuntime } from './policy-runtime';
import { REJECTION_CODES, rejection } from './rejections';
import { isClassifiedResult, resultOf } from './classified-result';

/** What `#refusedAtStart` returns when the call may start (an abort reason can be any value, even undefined). */
const GO: unknown = Symbol('go');

/** Receives the end of a call started with {@link Invocation.startSettled}: its value, or the error that ended it. */
export interface CallSettler {
  settled(ok: boolean, result: unknown): void;
}

/**
 * One logical call: deadline and caller cancellation, the hedge (if any) over lanes, the fallback, and the `call`
 * event. The invocation is itself the primary lane, so an unhedged call allocates one object for all of it.
 */
export class Invocation extends Lane implements FallbackCall {
  readonly policyName: string;
  readonly route: string | undefined;
  /** Absolute deadline on the engine clock, if the call runs under `withDeadline`. */
  readonly deadline: number | undefined;
  /** The ambient deadline as bound (with its own clock), passed on unchanged to the attempt frames. */
  readonly frameDeadline: number | undefined;
  readonly frameClock: Clock | undefined;
  readonly criticality: number | undefined;
  /** Whether anything can cancel the call from outside (caller signal, deadline, hedge). */
  readonly cancellable: boolean;
  readonly shadow: boolean;
  /**
   * Whether the call's attempts (and fallback) run in a context frame of their own (SPEC §12.1, §14.6): only when
   * something can abort an attempt — a timeout, a caller's signal, a deadline, a hedge — would `currentSignal()`
   * answer differently inside it than in the caller's frame (deadline and criticality are the caller's either way).
   * Otherwise fn runs in its caller's frame: one AsyncLocalStorage frame fewer per call.
   */
  readonly framed: boolean;
  /** Set when the caller's signal or the deadline ended the call. */
  callerCancelled = false;
  /** Set when it was the deadline: the call then failed (a timeout), it was not cancelled by its caller. */
  deadlineExpired = false;
  /** Hedged lanes besides this one. */
  lanes: Lane[] | undefined = undefined;
  /** Links in the caller signal's list of running calls (signal-watch.ts). */
  watchPrev: SignalWatcher | undefined = undefined;
  watchNext: SignalWatcher | undefined = undefined;
  readonly #hedging: boolean;
  #started = 0;
  #deadlineTimer: unknown = undefined;
  #resolve: ((value: unknown) => void) | undefined = undefined;
  #reject: ((error: unknown) => void) | undefined = undefined;
  /** Set instead of resolve/reject when the call was started by {@link Invocation.startSettled}. */
  #settler: CallSettler | undefined = undefined;

  constructor(
    readonly engine: Engine,
    readonly pr: PolicyRuntime,
    readonly ks: KeyState,
    readonly fn: (ctx: CallContext) => unknown,
    readonly opts: RunOptions<unknown>,
  ) {
    super();
    this.policyName = pr.policy.name;
    this.route = opts.route;
    const frame = currentFrame();
    this.criticality = frame?.criticality;
    this.frameDeadline = frame?.deadline;
    this.frameClock = frame?.deadlineClock;
    if (frame?.deadline !== undefined && frame.deadlineClock !== undefined) {
      this.deadline = engine.clock.now() + (frame.deadline - frame.deadlineClock.now());
    } else {
      this.deadline = undefined;
    }
    this.shadow = pr.shadow;
    // Shadow mode launches no hedge: the call runs as if the policy were absent.
    this.#hedging = pr.policy.hedge !== undefined && opts.hedge !== false && !this.shadow;
    this.cancellable = opts.signal !== undefined || this.deadline !== undefined || this.#hedging;
    this.framed =
      engine.ambientContext &&
      (this.cancellable ||
        pr.policy.timeout !== undefined ||
        (opts as { [AMBIENT_SIGNAL]?: unknown })[AMBIENT_SIGNAL] === true);
  }

  /** Starts the call; the promise settles with its value, the fallback's value, or the error that ended it. */
  start(): Promise<unknown> {
    const started = this.#startTime();
    const refused = this.#refusedAtStart(started);
    if (refused !== GO) return Promise.reject(refused);
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      this.#begin(started);
    });
  }

  /**
   * Starts the call and reports its end to `settler` instead of through a promise: the caller's own continuation
   * runs directly, with no promise and no reaction of the call's own. `settler.settled` is called exactly once,
   * possibly before this returns (a refusal at start, a synchronous `fn`).
   */
  startSettled(settler: CallSettler): void {
    const started = this.#startTime();
    const refused = this.#refusedAtStart(started);
    if (refused !== GO) return settler.settled(false, refused);
    this.#settler = settler;
    this.#begin(started);
  }

  /**
   * The clock at the call's start, or NaN when nothing would read it: no strategy that reads the clock, no deadline,
   * no listener for the `call` event's duration (a listener added while the call runs gets no `call` event for it).
   */
  #startTime(): number {
    const e = this.engine;
    if (this.pr.startsWithoutClock && this.deadline === undefined && !e.listening) return NaN;
    return e.clock.now();
  }

  /** The caller already aborted: the error the call ends with at once (no fallback: nobody waits for it); else GO. */
  #refusedAtStart(started: number): unknown {
    this.#started = started;
    const signal = this.opts.signal;
    if (signal?.aborted) {
      this.#emitCall('cancelled', started, undefined);
      return signal.reason;
    }
    return GO;
  }

  #begin(started: number): void {
    const e = this.engine;
    const signal = this.opts.signal;
    // One shared listener per caller signal, not one per call (Node warns past 10 on one signal).
    if (signal !== undefined) watchSignal(signal, this);
    const ks = this.ks;
    ks.inflight++;
    if (this.deadline !== undefined && this.deadline > started) {
      this.#deadlineTimer = e.clock.setTimeout(() => this.#deadlineReached(), this.deadline - started);
    } else if (this.deadline !== undefined) {
      // Already past the deadline: no strategy runs, but the fallback wraps everything (SPEC §4), so it still may.
      this.error = rejection('timeout', ErrorCode.DEADLINE_EXCEEDED, this.policyName, this.route);
      return passEnded(false, this);
    }
    // A forced-open key refuses before any strategy, but the fallback still covers it (it wraps everything).
    if (ks.forcedOpen || this.pr.forcedAll) {
      if (!this.shadow) return passEnded(this.#forcedOpen(), this);
      this.shadowRejected(rejection('infrastructure', ErrorCode.FORCED_OPEN, this.policyName, this.route));
      return runBare(this, this, passEnded);
    }
    // Only calls that may reach the dependency earn budget tokens.
    ks.retryBudget?.onCall();
    ks.hedgeBudget?.onCall();
    if (this.#hedging)
      runHedged(this).then(
        (ok) => passEnded(ok, this),
        (err: unknown) => this.finishFailed(err),
      );
    else runPass(this, this, passEnded, started);
  }

  /** The pipeline (or the hedge over it) ended: settle the call, or try the fallback first. */
  finishPass(ok: boolean): void {
    if (ok) return this.succeed(this.value);
    const error = this.callerCancelled ? this.cancelReason : this.error;
    const e = this.engine;
    // A caller that went away hears nothing: no fallback for it.
    if (!(this.callerCancelled && this.opts.signal?.aborted) && tryFallback(this, error)) return;
    this.#emitCall(this.#failureOutcome(error), this.#started, codeOf(error, e));
    // Ended on a result the policy classified as a failure: the caller still gets it (it reads the response).
    if (isClassifiedResult(error)) this.#settle(true, resultOf(error));
    else this.#settle(false, error);
  }

  fallbackFailed(fallbackError: unknown): void {
    this.#emitCall(
      this.callerCancelled && !this.deadlineExpired && fallbackError === this.cancelReason
        ? 'cancelled'
        : 'failure',
      this.#started,
      codeOf(fallbackError, this.engine),
    );
    this.#settle(false, fallbackError);
  }

  succeed(value: unknown): void {
    this.#emitCall('success', this.#started, undefined);
    this.#settle(true, value);
  }

  /** Gives back what the call holds (key, caller-signal watch, deadline timer), then settles its promise. */
  #settle(ok: boolean, result: unknown): void {
    const resolve = this.#resolve;
    const reject = this.#reject;
    const settler = this.#settler;
    if (settler === undefined && (resolve === undefined || reject === undefined)) return;
    this.#resolve = this.#reject = this.#settler = undefined;
    this.ks.callEnded();
    const signal = this.opts.signal;
    if (signal !== undefined) unwatchSignal(signal, this);
    if (this.#deadlineTimer !== undefined) this.engine.clock.clearTimeout(this.#deadlineTimer);
    if (settler !== undefined) {
      try {
        settler.settled(ok, result);
      } catch (err) {
        // The settler's own bug: surface it (as a throw from a callback would) instead of losing it in the pipeline.
        queueMicrotask(() => {
          throw err;
        });
      }
    } else if (ok) resolve!(result);
    else reject!(result);
  }

  /** Finishing threw (a user `classify` or listener-free bug): the call fails with that error, once. */
  finishFailed(err: unknown): void {
    this.#settle(false, err);
  }

  #deadlineReached(): void {
    if (this.callerCancelled) return;
    this.deadlineExpired = true;
    this.cancelAll(rejection('timeout', ErrorCode.DEADLINE_EXCEEDED, this.policyName, this.route));
  }

  /**
   * The caller's signal aborted. Usually that cancels everything; after the deadline did, the pipeline has already
   * stopped, but a fallback may be running past the deadline: the call now ends with the caller's reason, as a
   * cancellation (SPEC §11.14: `run` rejects at once when the caller aborts).
   */
  callerAborted(reason: unknown): void {
    if (!this.callerCancelled) return this.cancelAll(reason);
    if (!this.deadlineExpired) return;
    this.deadlineExpired = false;
    this.cancelReason = reason;
    const wake = this.wake;
    this.wake = undefined;
    wake?.(reason);
  }

  /** Caller abort or deadline: every lane stops now and releases what it holds. */
  cancelAll(reason: unknown): void {
    if (this.callerCancelled) return;
    this.callerCancelled = true;
    this.cancel(reason);
    if (this.lanes !== undefined) for (const l of this.lanes) l.cancel(reason);
  }

  attemptTimeout(attempt: number, timeout: number): ResilienceError {
    const e = this.engine;
    if (e.listening) {
      const event = {
        type: 'attempt_timeout',
        policy: this.policyName,
        route: this.route,
        attempt,
        timeout,
      } as const;
      e.emit(this.shadow ? { ...event, shadow: true } : event);
    }
    // Without a stack, like the rejections: a slow dependency times out many attempts at once.
    return stacklessError({
      kind: 'infrastructure',
      code: ErrorCode.ATTEMPT_TIMEOUT,
      message: `Attempt ${attempt} timed out after ${timeout} ms`,
      policy: this.policyName,
      ...(this.route === undefined ? {} : { route: this.route }),
    });
  }

  shadowRejected(error: ResilienceError): void {
    const e = this.engine;
    if (!e.listening) return;
    const retryAfter = error.retryAfter;
    e.emit({
      type: 'rejected',
      policy: this.policyName,
      route: this.route,
      code: error.code,
      ...(retryAfter === undefined ? {} : { retryAfter }),
      shadow: true,
    });
  }

  #failureOutcome(error: unknown): CallOutcome {
    if (this.callerCancelled) return this.deadlineExpired ? 'failure' : 'cancelled';
    if (this.rejected || (isOwnResilienceError(error) && REJECTION_CODES.has(error.code))) return 'rejected';
    return 'failure';
  }

  #forcedOpen(): false {
    const err = rejection('infrastructure', ErrorCode.FORCED_OPEN, this.policyName, this.route);
    this.error = err;
    this.rejected = true;
    const e = this.engine;
    if (e.listening) e.emit({ type: 'rejected', policy: this.policyName, route: this.route, code: err.code });
    return false;
  }

  #emitCall(outcome: CallOutcome, started: number, code: string | undefined): void {
    const e = this.engine;
    if (!e.listening || Number.isNaN(started)) return;
    const duration = e.clock.now() - started;
    // A code says why Ballast or the dependency ended the call; a caller's abort reason is not one (SPEC §5 events).
    e.emit(
      code === undefined || outcome === 'cancelled'
        ? { type: 'call', policy: this.policyName, route: this.route, outcome, duration }
        : { type: 'call', policy: this.policyName, route: this.route, outcome, duration, code },
    );
  }
}

/**
 * The continuation of an unhedged call's pass — one module-level function rather than a closure per call. A throw
 * while finishing (a user `classify` or fallback selector) fails the call with it instead of leaving it pending.
 */
function passEnded(ok: boolean, lane: Lane): void {
  const inv = lane as Invocation;
  try {
    inv.finishPass(ok);
  } catch (err) {
    inv.finishFailed(err);
  }
}

/** Ballast's own codes: the only codes a `call` event names; any other error is named by its kind. */
const BALLAST_CODES: ReadonlySet<string> = new Set<string>(Object.values(ErrorCode));

/**
 * The `code` of a failed call's event (SPEC §5): Ballast's code, else the error's kind — also for a
 * `ResilienceError` the application threw with a code of its own (an order id would make one metric series each).
 */
function codeOf(error: unknown, e: Engine): string {
  return isOwnResilienceError(error) && BALLAST_CODES.has(error.code) ? error.code : e.classify(error);
}
