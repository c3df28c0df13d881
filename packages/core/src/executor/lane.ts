import type { BreakerPermit } from '../stores/ports';
import type { AttemptContext } from './attempt-context';

/** Called once when a lane's pass through the pipeline ends: `ok` with `lane.value`, else `lane.error`. */
export type PassDone = (ok: boolean, lane: Lane) => void;

/**
 * One pass through the policy pipeline (rate limit → bulkhead → breaker | throttle → retry → timeout). A call has
 * one lane, plus one per hedged attempt. Outcomes are values on the lane (`ok`, `value`, `error`); only the outer
 * `run` throws.
 *
 * The pass is written in continuation-passing style (see pipeline.ts), so what it holds lives here rather than in
 * an async function's frame: `holds*` say what the finish must give back, exactly once.
 *
 * Every wait of a lane (bulkhead queue, backoff sleep, attempt, remote store) registers `wake`, so cancelling the
 * lane settles whatever it is waiting for at once — the executor never waits for a function that ignores its signal.
 */
export class Lane implements BreakerPermit {
  value: unknown = undefined;
  error: unknown = undefined;
  /** Set when `error` is a rejection a Ballast strategy raised (counted as `rejected`, not `failure`). */
  rejected = false;
  cancelled = false;
  /** Set when a store failed and the in-process store answered instead (fail-open). */
  degraded = false;
  cancelReason: unknown = undefined;
  /** The attempt running now, whose signal a cancellation aborts. */
  ctx: AttemptContext | undefined = undefined;
  /** Attempts started on this lane (ctx.attempt of the last one). */
  attempts = 0;
  /** Settles the current wait with a cancellation; cleared when the wait ends. */
  wake: ((reason: unknown) => void) | undefined = undefined;

  /** The pass's continuation; cleared when called, so the pass ends once. */
  done: PassDone | undefined = undefined;
  /** A bulkhead slot is held since `admittedAt`. */
  holdsSlot = false;
  admittedAt = 0;
  /**
   * A breaker admission is held, from the local store or the configured one. The lane is itself the permit: its
   * generation and lease are copied at admission, because a store may reuse its admission object for the next
   * call (ports.ts) — holding that object would let a later admission's generation vouch for this outcome.
   */
  holdsPermit = false;
  permitLocal = false;
  generation = 0;
  lease: string | undefined = undefined;
  /** The adaptive throttle admitted this pass and expects its outcome. */
  holdsThrottle = false;
  /** The last backoff delay (decorrelated jitter needs it). */
  previousDelay = 0;
  /**
   * Shadow mode (SPEC §14.3) only. `detached`: the strategies' pass has ended as enforce mode would have ended it (a
   * refusal, a timeout: what it held is given back) while the call goes on bare, its result coming from fn alone.
   * `shadowPark`: a bulkhead wait the lane does not wait for (it runs meanwhile), given up when the pass ends.
   */
  detached = false;
  /** Set while a shadow timeout's decision runs: its end detaches the pass instead of ending the call. */
  awaitingResult = false;
  shadowPark: { cancel(): void } | undefined = undefined;

  /** Cancels this lane once: aborts the running attempt's signal and ends its current wait. */
  cancel(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.cancelReason = reason;
    this.ctx?.abort(reason);
    const w = this.wake;
    this.wake = undefined;
    if (w !== undefined) w(reason);
  }
}
