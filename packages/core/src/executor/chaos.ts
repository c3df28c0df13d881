import { runInFrame } from '../context/context-storage';
import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import type { ChaosInjection } from '../events';
import type { ResolvedChaosFault, ResolvedChaosOutcome } from '../strategies/chaos-strategy';
import { ON_ABORT, type AbortHook, type AttemptContext } from './attempt-context';
import type { CallState } from './call-state';
import { TimerEntry } from './timer-queue';

/**
 * The chaos strategy's work in one attempt (SPEC §14.3), called where the attempt would call `fn` — and only when
 * the policy's runtime has chaos armed (enabled, with something to inject): a policy without chaos pays one field
 * check per attempt.
 *
 * Draws, with the `Resilience`'s `random`, one per configured injection, in this order, stopping at the first hit:
 * - **fault**: the attempt throws `error()` (or `new Error(message)`), as if `fn` had thrown it at once;
 * - **outcome**: the attempt returns `result()` (or `value`), as if `fn` had; a `classifyResult` still judges it;
 * - **latency**: the attempt waits `delay` on the engine's shared timer queue, then calls `fn`. The wait ends early
 *   when the attempt's signal is aborted — its timeout, the caller, the deadline, a lost hedge race — and `fn` then
 *   never runs: the attempt ends with that abort, and no timer or hook of the wait outlives it.
 *
 * A throw from `error()` or `result()` is a bug in the experiment, not an injected failure: the attempt fails with
 * `internal` / `callback_failed`, which no retry retries (as a throwing `classifyResult` does).
 */
export function callWithChaos(inv: CallState, ctx: AttemptContext): unknown {
  const chaos = inv.pr.chaosArmed!;
  const random = inv.engine.random;
  // Shadow mode (SPEC §14.3): the draws are made and reported, but nothing is injected.
  if (inv.shadow) {
    const hit =
      chaos.fault !== undefined && random() < chaos.fault.rate
        ? 'fault'
        : chaos.outcome !== undefined && random() < chaos.outcome.rate
          ? 'outcome'
          : chaos.latency !== undefined && random() < chaos.latency.rate
            ? 'latency'
            : undefined;
    if (hit !== undefined)
      injected(inv, hit, ctx.attempt, hit === 'latency' ? chaos.latency!.delay : undefined, true);
    return callFn(inv, ctx);
  }
  const fault = chaos.fault;
  if (fault !== undefined && random() < fault.rate) {
    injected(inv, 'fault', ctx.attempt, undefined);
    throw injectedFault(inv, fault);
  }
  const outcome = chaos.outcome;
  if (outcome !== undefined && random() < outcome.rate) {
    injected(inv, 'outcome', ctx.attempt, undefined);
    return injectedOutcome(inv, outcome);
  }
  const latency = chaos.latency;
  if (latency !== undefined && random() < latency.rate) {
    injected(inv, 'latency', ctx.attempt, latency.delay);
    if (latency.delay > 0) return new LatencyWait(inv, ctx, latency.delay).promise;
  }
  return callFn(inv, ctx);
}

/** The attempt's own call of `fn`, in the attempt's context frame when the call has one (see attempts.ts). */
function callFn(inv: CallState, ctx: AttemptContext): unknown {
  return inv.framed ? runInFrame(ctx, inv.fn, ctx) : inv.fn(ctx);
}

function injected(
  inv: CallState,
  injection: ChaosInjection,
  attempt: number,
  delay: number | undefined,
  shadow?: true,
): void {
  const e = inv.engine;
  if (!e.listening) return;
  e.emit({
    type: 'chaos_injected',
    policy: inv.policyName,
    route: inv.route,
    injection,
    attempt,
    ...(delay === undefined ? {} : { delay }),
    ...(shadow === undefined ? {} : { shadow }),
  });
}

function injectedFault(inv: CallState, fault: ResolvedChaosFault): unknown {
  if (fault.error === undefined) return new Error(fault.message);
  try {
    return fault.error();
  } catch (err) {
    return callbackFailed(inv, 'ChaosStrategy fault.error threw', err);
  }
}

function injectedOutcome(inv: CallState, outcome: ResolvedChaosOutcome): unknown {
  if (outcome.result === undefined) return outcome.value;
  try {
    return outcome.result();
  } catch (err) {
    throw callbackFailed(inv, 'ChaosStrategy outcome.result threw', err);
  }
}

function callbackFailed(inv: CallState, message: string, cause: unknown): ResilienceError {
  return new ResilienceError({
    kind: 'internal',
    code: ErrorCode.CALLBACK_FAILED,
    message,
    cause,
    policy: inv.policyName,
    ...(inv.route === undefined ? {} : { route: inv.route }),
  });
}

/**
 * Injected latency: an entry of the shared timer queue (no clock timer of its own), and the attempt's abort hook
 * (no AbortController: reading `ctx.signal` would create one). Whichever comes first settles the wait; the other is
 * then a no-op. The promise is the attempt's result, awaited by the attempt's watch (attempts.ts), which also arms
 * the attempt's timeout.
 */
class LatencyWait extends TimerEntry implements AbortHook {
  readonly promise: Promise<unknown>;
  #resolve!: (value: unknown) => void;
  #reject!: (error: unknown) => void;
  #open = true;

  constructor(
    readonly inv: CallState,
    readonly ctx: AttemptContext,
    delay: number,
  ) {
    super();
    this.promise = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    inv.engine.timers.add(this, delay);
    // Registered after the timer: an attempt already aborted (a listener of `chaos_injected` aborted the caller)
    // calls the hook at once, which takes the entry out again.
    ctx[ON_ABORT](this);
  }

  /** The delay is over: the attempt goes on and calls `fn` (its sync throw or result settles the wait). */
  override fire(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#resolve(callFn(this.inv, this.ctx));
    } catch (err) {
      this.#reject(err);
    }
  }

  /** The attempt was aborted during the delay: `fn` never runs; the attempt's watch has already settled it. */
  attemptAborted(reason: unknown): void {
    if (!this.#open) return;
    this.#open = false;
    this.inv.engine.timers.cancel(this);
    this.#reject(reason);
  }
}
