import type {
  BreakerAdmission,
  BreakerOutcome,
  BreakerParams,
  BreakerPermit,
  BreakerRecordResult,
  BreakerSnapshot,
  BreakerState,
  BreakerTransition,
} from './ports';
import { RollingWindow } from './rolling-window';

// Transitions are shared constants: reporting one allocates nothing. A transition to open carries the outcomes that
// opened it, so it is built then (a rare event, never on a call that leaves the state as it is).
const OPEN_TO_HALF_OPEN: BreakerTransition = Object.freeze({ from: 'open', to: 'half_open' });
const HALF_OPEN_TO_CLOSED: BreakerTransition = Object.freeze({ from: 'half_open', to: 'closed' });
const opened = (from: BreakerState, calls: number, failures: number): BreakerTransition =>
  Object.freeze({ from, to: 'open', failureRatio: failures / calls, calls });

/**
 * The length of the break in force (SPEC §14.3): `breakDuration` without growing breaks; with them, the stored length
 * clamped to `[breakDuration, maxBreakDuration]` (a retune may have moved either bound).
 */
export function currentBreak(params: BreakerParams, stored: number): number {
  const max = params.maxBreakDuration;
  if (max === undefined) return params.breakDuration;
  return Math.min(max, Math.max(params.breakDuration, stored));
}

/** The break after a failed half-open period: the current one × the multiplier, capped (1 s, 2 s, 4 s, …). */
export function nextBreak(params: BreakerParams, stored: number): number {
  const max = params.maxBreakDuration;
  if (max === undefined) return params.breakDuration;
  return Math.min(max, currentBreak(params, stored) * (params.breakDurationMultiplier ?? 2));
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Admitted = Mutable<Extract<BreakerAdmission, { admitted: true }>>;
type Rejected = Mutable<Extract<BreakerAdmission, { admitted: false }>>;

/**
 * One circuit breaker as a pure state machine: time only from the `now` argument, no I/O, no timers (SPEC §4, §10,
 * §11.9). A rolling window of calls trips it when `calls ≥ minThroughput` and `failures / calls ≥ failureRatio`; it
 * stays open for `breakDuration` (growing per failed half-open period up to `maxBreakDuration` when that is set; a
 * close resets it), then the next `acquire` moves it to half-open, which grants exactly
 * `halfOpenMaxCalls` probe leases per half-open period. All probes succeeding closes it with a fresh window, any
 * failure re-opens it, a `release` hands a lease back, and a lease that never reports is reclaimed after
 * `breakDuration`. Every state change bumps `generation`; outcomes carrying an older one are ignored.
 *
 * `inspect` never changes state; an open breaker whose break has elapsed reads as half-open (what the next call
 * finds). While open or half-open it reports the calls and failures that opened the breaker (the transition to open
 * carries the same), and while open the ms left of the break (`retryAfter`).
 *
 * The in-memory store keeps one per key; the Redis store's Lua script (`@ballast/redis`) is the same machine on the
 * server, and a seeded test drives both with the same traces and compares every answer. Result objects are reused
 * (the store port allows it), so the hot path allocates nothing.
 */
export class CircuitStateMachine {
  private state: BreakerState = 'closed';
  private generation = 0;
  private openUntil = 0;
  /** The length of the current (or last) break while open and half-open; 0 once closed (SPEC §14.3). */
  private breakLength = 0;
  /** Calls and failures that last opened the breaker (kept while open and half-open; 0 once closed). */
  private openedCalls = 0;
  private openedFailures = 0;
  private readonly window = new RollingWindow();
  /** Half-open probe leases currently held, with the time each one is reclaimed. */
  private readonly leases: string[] = [];
  private readonly leaseExpiry: number[] = [];
  /** Probes of this half-open period that reported success. */
  private successes = 0;
  private leaseSeq = 0;
  private readonly admitted: Admitted = {
    admitted: true,
    state: 'closed',
    generation: 0,
    lease: undefined,
    transition: undefined,
  };
  private readonly rejected: Rejected = {
    admitted: false,
    state: 'open',
    retryAfter: 0,
    transition: undefined,
  };
  private readonly recorded: Mutable<BreakerRecordResult> = { state: 'closed', transition: undefined };

  /** Every state change goes through here: a new generation makes outcomes of earlier admissions stale. */
  private moveTo(state: BreakerState, openUntil = 0): void {
    if (state === 'closed') this.openedCalls = this.openedFailures = this.breakLength = 0;
    this.state = state;
    this.generation++;
    this.leases.length = 0;
    this.leaseExpiry.length = 0;
    this.successes = 0;
    this.openUntil = openUntil;
    if (state === 'closed') this.window.clear();
  }

  /**
   * Frees the slots of probes that never reported within `breakDuration`, so half-open cannot wedge. A lease
   * expiring more than `breakDuration` ahead was granted before the clock stepped back: it is cut to that.
   */
  private reclaimLeases(now: number, breakDuration: number): void {
    for (let i = this.leases.length - 1; i >= 0; i--) {
      if (this.leaseExpiry[i]! <= now) {
        this.leases.splice(i, 1);
        this.leaseExpiry.splice(i, 1);
      } else if (this.leaseExpiry[i]! - now > breakDuration) this.leaseExpiry[i] = now + breakDuration;
    }
  }

  private dropLease(index: number): void {
    this.leases.splice(index, 1);
    this.leaseExpiry.splice(index, 1);
  }

  acquire(params: BreakerParams, now: number): BreakerAdmission {
    let transition: BreakerTransition | undefined;
    if (this.state === 'closed') {
      const a = this.admitted;
      a.state = 'closed';
      a.generation = this.generation;
      a.lease = undefined;
      a.transition = undefined;
      return a;
    }
    if (this.state === 'open') {
      // Open for at most the break's length from now: a clock that stepped back must not stretch the break.
      const length = currentBreak(params, this.breakLength);
      if (this.openUntil - now > length) this.openUntil = now + length;
      if (now < this.openUntil) return this.#reject(this, 'open', this.openUntil - now, undefined);
      this.moveTo('half_open');
      transition = OPEN_TO_HALF_OPEN;
    }
    this.reclaimLeases(now, params.breakDuration);
    if (this.leases.length + this.successes >= params.halfOpenMaxCalls) {
      // Every slot is taken by a lease in flight (successes alone would have closed the breaker).
      const retryAfter = this.leases.length > 0 ? Math.min(...this.leaseExpiry) - now : params.breakDuration;
      return this.#reject(this, 'half_open', retryAfter, transition);
    }
    const lease = `${this.generation}:${++this.leaseSeq}`;
    this.leases.push(lease);
    this.leaseExpiry.push(now + params.breakDuration);
    return { admitted: true, state: 'half_open', generation: this.generation, lease, transition };
  }

  record(
    params: BreakerParams,
    permit: BreakerPermit,
    outcome: BreakerOutcome,
    now: number,
  ): BreakerRecordResult {
    const r = this.recorded;
    r.transition = undefined;
    if (permit.generation === this.generation) {
      if (this.state === 'closed') this.#recordClosed(this, params, outcome, now);
      else if (this.state === 'half_open') this.#recordProbe(this, params, permit, outcome, now);
    }
    r.state = this.state;
    return r;
  }

  inspect(params: BreakerParams, now: number): BreakerSnapshot {
    // Closed: the rolling window now. Open, half-open: the outcomes that opened it (the window is not kept then).
    const w =
      this.state === 'closed'
        ? this.window.peek(params.samplingWindow, now)
        : { calls: this.openedCalls, failures: this.openedFailures };
    const failureRatio = w.calls === 0 ? 0 : w.failures / w.calls;
    const generation = this.generation;
    // Open until at most the break's length from now, as `acquire` reads it after a clock stepped back.
    const retryAfter = Math.min(this.openUntil - now, currentBreak(params, this.breakLength));
    if (this.state === 'open' && retryAfter > 0)
      return { state: 'open', failureRatio, calls: w.calls, generation, retryAfter };
    // An open breaker whose break is over reads as half-open: that is what the next call finds (no state moves).
    const state = this.state === 'open' ? 'half_open' : this.state;
    return { state, failureRatio, calls: w.calls, generation };
  }

  /** Closes the breaker with a fresh window (an operator's reset). */
  reset(): void {
    this.moveTo('closed');
  }

  #reject(
    e: CircuitStateMachine,
    state: BreakerState,
    retryAfter: number,
    transition: BreakerTransition | undefined,
  ): BreakerAdmission {
    if (transition !== undefined) return { admitted: false, state, retryAfter, transition };
    const r = e.rejected;
    r.state = state;
    r.retryAfter = retryAfter;
    r.transition = undefined;
    return r;
  }

  #recordClosed(e: CircuitStateMachine, params: BreakerParams, outcome: BreakerOutcome, now: number): void {
    if (outcome === 'release') return;
    const w = e.window;
    w.advance(params.samplingWindow, now);
    w.add(outcome === 'failure');
    if (w.failures > 0 && w.calls >= params.minThroughput && w.failures / w.calls >= params.failureRatio) {
      e.recorded.transition = opened('closed', w.calls, w.failures);
      e.openedCalls = w.calls;
      e.openedFailures = w.failures;
      e.moveTo('open', now + params.breakDuration);
      e.breakLength = params.breakDuration;
    }
  }

  #recordProbe(
    e: CircuitStateMachine,
    params: BreakerParams,
    permit: BreakerPermit,
    outcome: BreakerOutcome,
    now: number,
  ): void {
    e.reclaimLeases(now, params.breakDuration);
    const i = permit.lease === undefined ? -1 : e.leases.indexOf(permit.lease);
    if (i < 0) return; // a lease already reclaimed (or none): its outcome no longer counts
    if (outcome === 'failure') {
      // What opens it again: the probes that reported in this half-open period (successes, then this failure).
      e.openedCalls = e.successes + 1;
      e.openedFailures = 1;
      e.recorded.transition = opened('half_open', e.openedCalls, 1);
      const length = nextBreak(params, e.breakLength);
      e.moveTo('open', now + length);
      e.breakLength = length;
      return;
    }
    e.dropLease(i);
    if (outcome === 'release') return;
    e.successes++;
    if (e.successes >= params.halfOpenMaxCalls) {
      e.moveTo('closed');
      e.recorded.transition = HALF_OPEN_TO_CLOSED;
    }
  }
}
