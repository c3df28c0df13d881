import { LongRtt } from './long-rtt';
import { OptionProblems } from './option-checks';

/** Options of {@link Gradient2Limit}. @public */
export interface Gradient2LimitOptions {
  /** Ceiling of the limit (≥ 1). */
  readonly maxConcurrency: number;
  /** Floor of the limit (1 ≤ min ≤ max, default 1). */
  readonly minConcurrency?: number | undefined;
  /** Starting estimate, in [min, max] (default `maxConcurrency`). */
  readonly initialLimit?: number | undefined;
  /** How much slower than the long RTT a sample may be before it counts as queueing (≥ 1, default 1.5). */
  readonly rttTolerance?: number | undefined;
  /** Weight of the new estimate in each update, in (0, 1] (default 0.2). */
  readonly smoothing?: number | undefined;
  /** Samples in the long RTT's exponential average (integer ≥ 1, default 600). */
  readonly longWindow?: number | undefined;
  /** Queue allowance added to each new estimate (≥ 0, default 4) — Netflix's `queueSize`. */
  readonly headroom?: number | undefined;
}

/** Resolved, frozen options of a {@link Gradient2Limit}. @public */
export interface ResolvedGradient2LimitOptions {
  readonly maxConcurrency: number;
  readonly minConcurrency: number;
  readonly initialLimit: number;
  readonly rttTolerance: number;
  readonly smoothing: number;
  readonly longWindow: number;
  readonly headroom: number;
}

/** One completed request: its round-trip time (ms) and the requests in flight when it was sent. @public */
export interface Gradient2Sample {
  readonly rtt: number;
  readonly inflight: number;
}

/** Defaults of {@link Gradient2LimitOptions} (SPEC §3); `initialLimit` defaults to `maxConcurrency`. @public */
export const DEFAULT_GRADIENT2_OPTIONS = Object.freeze({
  minConcurrency: 1,
  rttTolerance: 1.5,
  smoothing: 0.2,
  longWindow: 600,
  headroom: 4,
});

/** Samples averaged plainly before the long RTT switches to its EMA (Netflix: `ExpAvgMeasurement(longWindow, 10)`). */
const LONG_RTT_WARMUP = 10;
/** When the long RTT exceeds twice the sample, it is decayed by this factor (recovery after prolonged load). */
const DRIFT_DECAY = 0.95;

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * Concurrency limit from the gradient between the long-term RTT and the current one — a faithful port of
 * `Gradient2Limit` from Netflix concurrency-limits (github.com/Netflix/concurrency-limits, `Gradient2Limit.java`;
 * background in "Performance Under Load", Netflix Technology Blog, 2018). No threshold to configure: queueing shows
 * up as RTT rising above its own long-term average.
 *
 * Per sample (rtt in ms, inflight when the request was sent):
 * ```
 * long = longRtt.add(rtt)                  // mean of the first 10 samples, then EMA with factor 2/(longWindow+1)
 * if long / rtt > 2: longRtt ×= 0.95       // drift decay: recover quickly after prolonged load (later samples)
 * if inflight < est / 2: return trunc(est) // app-limited: too little traffic to learn anything
 * gradient = max(0.5, min(1, rttTolerance · long / rtt))
 * next = est · gradient + headroom
 * next = est · (1 − smoothing) + next · smoothing
 * est  = clamp(next, min, max);  limit = trunc(est)
 * ```
 * Regimes: with a steady RTT the gradient is 1 and the estimate grows by `smoothing · headroom` per sample (+0.8
 * with the defaults) to the ceiling; when queueing pushes RTT above `rttTolerance · long`, the gradient falls
 * (never below 0.5, which filters outliers) and the estimate sinks towards `headroom / (1 − gradient)`; as the long
 * RTT catches up or load ends, it recovers.
 *
 * Samples with `rtt ≤ 0` or a non-finite RTT are ignored (SPEC §11.6). `onSample` allocates nothing.
 * @public
 */
export class Gradient2Limit {
  readonly options: ResolvedGradient2LimitOptions;
  /** Initialised to a number, not left undefined, so V8 keeps the field unboxed: updates allocate nothing. */
  private estimate = 0;
  private readonly longRtt: LongRtt;

  constructor(options: Gradient2LimitOptions) {
    const d = DEFAULT_GRADIENT2_OPTIONS;
    const max = options.maxConcurrency;
    const min = options.minConcurrency ?? d.minConcurrency;
    const initial = options.initialLimit ?? max;
    const rttTolerance = options.rttTolerance ?? d.rttTolerance;
    const smoothing = options.smoothing ?? d.smoothing;
    const longWindow = options.longWindow ?? d.longWindow;
    const headroom = options.headroom ?? d.headroom;
    new OptionProblems('Gradient2Limit')
      .check(isFiniteNumber(max) && max >= 1, 'maxConcurrency', 'a finite number ≥ 1', max)
      .check(
        isFiniteNumber(min) && min >= 1 && !(min > max),
        'minConcurrency',
        'a finite number in [1, maxConcurrency]',
        min,
      )
      .check(
        isFiniteNumber(initial) && !(initial < min) && !(initial > max),
        'initialLimit',
        'a finite number in [minConcurrency, maxConcurrency]',
        initial,
      )
      .check(
        isFiniteNumber(rttTolerance) && rttTolerance >= 1,
        'rttTolerance',
        'a finite number ≥ 1',
        rttTolerance,
      )
      .check(
        typeof smoothing === 'number' && smoothing > 0 && smoothing <= 1,
        'smoothing',
        'in (0, 1]',
        smoothing,
      )
      .check(Number.isInteger(longWindow) && longWindow >= 1, 'longWindow', 'an integer ≥ 1', longWindow)
      .check(isFiniteNumber(headroom) && headroom >= 0, 'headroom', 'a finite number ≥ 0', headroom)
      .throwIfAny();
    this.options = Object.freeze({
      maxConcurrency: max,
      minConcurrency: min,
      initialLimit: initial,
      rttTolerance,
      smoothing,
      longWindow,
      headroom,
    });
    this.estimate = initial;
    this.longRtt = new LongRtt(longWindow, LONG_RTT_WARMUP);
  }

  /** The integer limit: `trunc(estimatedLimit)`. */
  get limit(): number {
    return Math.trunc(this.estimate);
  }

  /** The float state of the algorithm, in [minConcurrency, maxConcurrency]. */
  get estimatedLimit(): number {
    return this.estimate;
  }

  /** The long-term RTT estimate in ms (0 before the first sample). */
  get longRttMs(): number {
    return this.longRtt.value;
  }

  /** Feeds one completed request and returns the new integer limit. O(1), allocation-free. */
  onSample(sample: Gradient2Sample): number {
    const rtt = sample.rtt;
    if (!(rtt > 0) || rtt === Infinity) return Math.trunc(this.estimate);
    const { rttTolerance, smoothing, headroom, minConcurrency, maxConcurrency } = this.options;

    const long = this.longRtt.add(rtt);
    if (long / rtt > 2) this.longRtt.scale(DRIFT_DECAY);

    const estimate = this.estimate;
    if (sample.inflight < estimate / 2) return Math.trunc(estimate);

    const ratio = (rttTolerance * long) / rtt;
    const gradient = ratio > 1 ? 1 : ratio < 0.5 ? 0.5 : ratio;
    let next = estimate * gradient + headroom;
    next = estimate * (1 - smoothing) + next * smoothing;
    next = next > maxConcurrency ? maxConcurrency : next < minConcurrency ? minConcurrency : next;
    this.estimate = next;
    return Math.trunc(next);
  }
}
