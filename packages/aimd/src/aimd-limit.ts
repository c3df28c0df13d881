import { WindowedP2Quantile } from '@ballast/p2-quantile';
import { OptionProblems, isOpenUnit } from './option-checks';

/** Options of {@link AimdLimit}. Durations and latencies are milliseconds. @public */
export interface AimdLimitOptions {
  /** Ceiling, and the starting limit (≥ 1). */
  readonly maxConcurrency: number;
  /** Floor (1 ≤ min ≤ max, default 1). */
  readonly minConcurrency?: number | undefined;
  /** Multiplicative decrease on a breach, in (0, 1) (default 0.9). */
  readonly backoffRatio?: number | undefined;
  /** Additive increase per full limit's worth of good samples: `limit += increaseStep / limit` (> 0, default 1). */
  readonly increaseStep?: number | undefined;
  /** Minimum ms between two decreases; breaches inside it are coalesced (≥ 0, default 1000). */
  readonly cooldown?: number | undefined;
  /** Latency above which a sample (or the quantile) is a breach (> 0). */
  readonly latencyThreshold: number;
  /** When set, the signal is this quantile of recent latencies (windowed P²), in (0, 1). */
  readonly latencyQuantile?: number | undefined;
  /** Samples per window of the quantile estimator (integer ≥ 5, default 512). */
  readonly window?: number | undefined;
}

/** Resolved, frozen options of an {@link AimdLimit}. @public */
export interface ResolvedAimdLimitOptions {
  readonly maxConcurrency: number;
  readonly minConcurrency: number;
  readonly backoffRatio: number;
  readonly increaseStep: number;
  readonly cooldown: number;
  readonly latencyThreshold: number;
  readonly latencyQuantile: number | undefined;
  readonly window: number;
}

/** What a sample did to the limit. @public */
export type AimdDecision = 'increase' | 'decrease' | 'hold';

/** Defaults of {@link AimdLimitOptions} (SPEC §3). @public */
export const DEFAULT_AIMD_OPTIONS = Object.freeze({
  minConcurrency: 1,
  backoffRatio: 0.9,
  increaseStep: 1,
  cooldown: 1000,
  window: 512,
});

/** Samples a fresh P² epoch needs before it has an estimate. */
const WARM_SAMPLES = 5;

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * A concurrency limit by additive increase, multiplicative decrease, driven by latency — the congestion
 * avoidance of TCP (V. Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988; D. Chiu and R. Jain, "Analysis
 * of the Increase and Decrease Algorithms for Congestion Avoidance in Computer Networks", 1989) applied to
 * in-flight requests, as in Netflix concurrency-limits' `AIMDLimit`.
 *
 * Per sample:
 * - breach = `latency > latencyThreshold`, or, with `latencyQuantile`, the windowed P² estimate (fed this sample
 *   first) `> latencyThreshold`; while the estimator warms up, the answer is `'hold'`;
 * - a breach at least `cooldown` ms after the last decrease (or the first breach ever) sets
 *   `limit = max(min, limit·backoffRatio)`, returns `'decrease'` — even at the floor — and opens a fresh quantile
 *   epoch so the next decision sees only post-decrease latency;
 * - a breach inside the cooldown returns `'hold'`: one overload episode is one decrease, not one per sample;
 * - no breach: `limit = min(max, limit + increaseStep / limit)`, i.e. +`increaseStep` per round trip of a full
 *   window of requests, returns `'increase'`.
 *
 * Why `step / limit`: each of the `limit` concurrent requests contributes a fraction, so the limit grows by about
 * `increaseStep` per "round" regardless of its size, as TCP's congestion window does per RTT.
 *
 * `limit` is a float starting at `maxConcurrency`; admit while `inFlight < limit`. `onSample` allocates nothing.
 * @public
 */
export class AimdLimit {
  readonly options: ResolvedAimdLimitOptions;
  /** Initialised to a number, not left undefined, so V8 keeps the field unboxed: updates allocate nothing. */
  private current = 0;
  private lastDecreaseAt = -Infinity;
  private readonly quantile: WindowedP2Quantile | undefined;

  constructor(options: AimdLimitOptions) {
    const d = DEFAULT_AIMD_OPTIONS;
    const o = {
      backoffRatio: options.backoffRatio ?? d.backoffRatio,
      increaseStep: options.increaseStep ?? d.increaseStep,
      cooldown: options.cooldown ?? d.cooldown,
      latencyThreshold: options.latencyThreshold,
      window: options.window ?? d.window,
    };
    const max = options.maxConcurrency;
    const min = options.minConcurrency ?? d.minConcurrency;
    const latencyQuantile = options.latencyQuantile;
    new OptionProblems('AimdLimit')
      .check(isFiniteNumber(max) && max >= 1, 'maxConcurrency', 'a finite number ≥ 1', max)
      .check(
        isFiniteNumber(min) && min >= 1 && !(min > max),
        'minConcurrency',
        'a finite number in [1, maxConcurrency]',
        min,
      )
      .check(isOpenUnit(o.backoffRatio), 'backoffRatio', 'in (0, 1)', o.backoffRatio)
      .check(
        isFiniteNumber(o.increaseStep) && o.increaseStep > 0,
        'increaseStep',
        'a finite number > 0',
        o.increaseStep,
      )
      .check(
        isFiniteNumber(o.cooldown) && o.cooldown >= 0,
        'cooldown',
        'a finite number of ms ≥ 0',
        o.cooldown,
      )
      .check(
        isFiniteNumber(o.latencyThreshold) && o.latencyThreshold > 0,
        'latencyThreshold',
        'a finite number of ms > 0',
        o.latencyThreshold,
      )
      .check(
        latencyQuantile === undefined || isOpenUnit(latencyQuantile),
        'latencyQuantile',
        'in (0, 1)',
        latencyQuantile,
      )
      .check(Number.isInteger(o.window) && o.window >= 5, 'window', 'an integer ≥ 5', o.window)
      .throwIfAny();
    this.options = Object.freeze({
      maxConcurrency: max,
      minConcurrency: min,
      backoffRatio: o.backoffRatio,
      increaseStep: o.increaseStep,
      cooldown: o.cooldown,
      latencyThreshold: o.latencyThreshold,
      latencyQuantile,
      window: o.window,
    });
    this.current = max;
    this.quantile =
      latencyQuantile === undefined
        ? undefined
        : new WindowedP2Quantile(latencyQuantile, { window: o.window });
  }

  /** The current limit: a float in [minConcurrency, maxConcurrency]. */
  get limit(): number {
    return this.current;
  }

  /** The latency signal in use: the last quantile estimate (quantile mode) or `undefined` (threshold mode / warming). */
  get latencyEstimate(): number | undefined {
    return this.quantile?.value();
  }

  /**
   * Feeds one latency sample observed at `now` (ms) and applies AIMD. Non-finite latencies are ignored
   * (`'hold'`). A non-finite `now` throws a `RangeError`: stored as the last decrease, NaN would disable the
   * cooldown for good and `Infinity` every later decrease. O(1), allocation-free.
   */
  onSample(latencyMs: number, now: number): AimdDecision {
    if (!(now - now === 0))
      throw new RangeError(`AimdLimit.onSample: now must be a finite number of ms, got ${now}`);
    if (!(latencyMs - latencyMs === 0)) return 'hold';
    const { latencyThreshold, minConcurrency, maxConcurrency } = this.options;
    let breach: boolean;
    const quantile = this.quantile;
    if (quantile === undefined) {
      breach = latencyMs > latencyThreshold;
    } else {
      quantile.add(latencyMs);
      if (quantile.count < WARM_SAMPLES) return 'hold'; // no estimate before five samples of the epoch
      breach = quantile.exceeds(latencyThreshold);
    }

    if (breach) {
      if (now - this.lastDecreaseAt < this.options.cooldown) return 'hold';
      const next = this.current * this.options.backoffRatio;
      this.current = next > minConcurrency ? next : minConcurrency;
      this.lastDecreaseAt = now;
      quantile?.reset();
      return 'decrease';
    }
    const next = this.current + this.options.increaseStep / this.current;
    this.current = next < maxConcurrency ? next : maxConcurrency;
    return 'increase';
  }
}
