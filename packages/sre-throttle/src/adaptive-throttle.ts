import { OptionProblems } from './option-checks';
import { RollingCounts } from './rolling-counts';

/** Options of {@link AdaptiveThrottle}. Durations are milliseconds. @public */
export interface AdaptiveThrottleOptions {
  /** Multiplier: the throttle lets through about `k` requests per accepted one (≥ 1, default 2). */
  readonly k?: number | undefined;
  /** Length of the rolling counting window in ms: only the last `window` ms count (> 0, default 120 000). */
  readonly window?: number | undefined;
  /** Requests in the window below which nothing is rejected (≥ 0, default 10). */
  readonly minThroughput?: number | undefined;
}

/** Resolved, frozen options of an {@link AdaptiveThrottle}. @public */
export interface ResolvedAdaptiveThrottleOptions {
  readonly k: number;
  readonly window: number;
  readonly minThroughput: number;
}

/** Defaults of {@link AdaptiveThrottleOptions} (SPEC §3). @public */
export const DEFAULT_ADAPTIVE_THROTTLE_OPTIONS: ResolvedAdaptiveThrottleOptions = Object.freeze({
  k: 2,
  window: 120_000,
  minThroughput: 10,
});

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * Client-side adaptive throttling from Google's _Site Reliability Engineering_ (O'Reilly 2016), ch. 21 "Handling
 * Overload": each client counts its `requests` and the backend's `accepts`, and rejects locally with probability
 *
 *     p = max(0, (requests − k·accepts) / (requests + 1))
 *
 * Why it works: in steady state the client sends about `k·accepts` requests (`requests·(1 − p) ≈ k·accepts`), so an
 * overloaded backend sees at most `k` times what it can accept instead of the full retry storm, while a healthy
 * backend (`accepts ≈ requests`) sees no local rejections at all. `k = 2` wastes at most one request per accepted
 * one; a larger `k` reacts later but lets more through.
 *
 * Counts cover the last `window` ms — the book's "over the last two minutes" — as a rolling window of ten time
 * buckets (see {@link RollingCounts}): an outage's counts age out bucket by bucket, so once it ends the probability
 * is back to 0 within one window of healthy traffic, usually much sooner (as soon as `requests ≤ k·accepts`). Below
 * `minThroughput` requests in the window the probability is 0, so a handful of early failures cannot shut the client
 * down.
 *
 * Usage: before each call, `shouldReject(now, random01)`. When it returns true, do not make the call — the shed call
 * has already been counted as a request (it is one: the caller wanted it). Otherwise make the call and report it
 * once with `record(now, accepted)`. Never call `record` for a call that `shouldReject` shed.
 * `record` and `shouldReject` allocate nothing.
 * @public
 */
export class AdaptiveThrottle {
  readonly options: ResolvedAdaptiveThrottleOptions;
  private readonly counts: RollingCounts;

  constructor(options: AdaptiveThrottleOptions = {}) {
    const d = DEFAULT_ADAPTIVE_THROTTLE_OPTIONS;
    const k = options.k ?? d.k;
    const window = options.window ?? d.window;
    const minThroughput = options.minThroughput ?? d.minThroughput;
    new OptionProblems('AdaptiveThrottle')
      .check(isFiniteNumber(k) && k >= 1, 'k', 'a finite number ≥ 1', k)
      .check(isFiniteNumber(window) && window > 0, 'window', 'a finite number of ms > 0', window)
      .check(
        isFiniteNumber(minThroughput) && minThroughput >= 0,
        'minThroughput',
        'a finite number ≥ 0',
        minThroughput,
      )
      .throwIfAny();
    this.options = Object.freeze({ k, window, minThroughput });
    this.counts = new RollingCounts(window);
  }

  /** Probability in [0, 1) that the next call is rejected locally at `now`. */
  rejectionProbability(now: number): number {
    this.roll(now, 'rejectionProbability');
    return this.probability();
  }

  /**
   * Decides whether to shed the next call: true when `random01 < rejectionProbability(now)`. A shed call is counted
   * as a request here; the caller must not `record` it.
   */
  shouldReject(now: number, random01: number): boolean {
    this.roll(now, 'shouldReject');
    if (random01 < this.probability()) {
      this.counts.add(false);
      return true;
    }
    return false;
  }

  /** Records a call that was made: `accepted` when the backend handled it (a healthy outcome). */
  record(now: number, accepted: boolean): void {
    this.roll(now, 'record');
    this.counts.add(accepted);
  }

  /** Requests (made and shed) counted in the window at `now`. */
  requests(now: number): number {
    this.roll(now, 'requests');
    return this.counts.requests;
  }

  /** Accepted requests counted in the window at `now`. */
  accepts(now: number): number {
    this.roll(now, 'accepts');
    return this.counts.accepts;
  }

  /** The rejection probability of the window's counts. */
  private probability(): number {
    const requests = this.counts.requests;
    if (requests < this.options.minThroughput) return 0;
    const p = (requests - this.options.k * this.counts.accepts) / (requests + 1);
    return p > 0 ? p : 0;
  }

  /**
   * Ages out the buckets that left the window at `now`. A non-finite `now` throws: an `Infinity` bucket would never
   * be `window` ms in the past, and the counts of a bad spell would stay for good.
   */
  private roll(now: number, method: string): void {
    if (!(now - now === 0))
      throw new RangeError(`AdaptiveThrottle.${method}: now must be a finite number of ms, got ${now}`);
    this.counts.advance(now);
  }
}
