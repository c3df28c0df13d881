import { AimdLimit } from '@ballast/aimd';
import { Gradient2Limit } from '@ballast/gradient2';
import type { Clock } from '../time/clock';
import type { DigestParams, LatencyDigestStore, StateKey } from '../stores/ports';
import type {
  ResolvedAdaptiveBulkheadOptions,
  ResolvedBulkheadOptions,
  ResolvedGradientBulkheadOptions,
} from '../strategies/types';
import type { BulkheadOutcome } from './admission';

/**
 * Where a bulkhead's limit comes from. The runtime reads `limit` after every `sample` and whenever a controller
 * reports an asynchronous change through the `onAsyncChange` callback it was built with.
 * @internal
 */
export interface LimitController {
  /** The integer limit admission uses (≥ 1). */
  readonly limit: number;
  /**
   * One finished call. `inflight` is the number of slots held *including* this call (read before its release),
   * the counterpart of Netflix concurrency-limits' in-flight count captured at acquire.
   */
  sample(latency: number, outcome: BulkheadOutcome, inflight: number): void;
}

export interface ControllerDeps {
  readonly clock: Clock;
  readonly key: StateKey;
  readonly digest: LatencyDigestStore;
  /** Called after a sample was applied asynchronously (a remote digest answered). */
  readonly onAsyncChange: () => void;
  /** Called when the digest store threw or rejected. */
  readonly onStoreError: (error: unknown) => void;
}

/** `bulkhead`: the limit is `maxConcurrency`, forever. */
export class FixedLimitController implements LimitController {
  readonly limit: number;
  constructor(options: ResolvedBulkheadOptions) {
    this.limit = Math.max(1, Math.floor(options.maxConcurrency));
  }
  sample(): void {}
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * `adaptiveBulkhead`: AIMD on latency (SPEC §3). Samples successes, and failures slower than the threshold —
 * a slow failure is still evidence of queueing downstream; fast failures are the breaker's signal, not ours.
 *
 * Threshold mode feeds each latency straight into `AimdLimit`. Quantile mode feeds the fleet-wide (or local)
 * `LatencyDigestStore` and hands its estimate to an `AimdLimit` in threshold mode, so the quantile can be shared
 * across replicas; after each decrease the digest opens a fresh epoch, exactly as `AimdLimit` does for its own
 * estimator. Store errors skip the sample (a degraded store must never wedge the limit) and are reported.
 */
export class AimdLimitController implements LimitController {
  readonly #aimd: AimdLimit;
  readonly #threshold: number;
  readonly #deps: ControllerDeps;
  readonly #params: DigestParams | undefined;

  constructor(options: ResolvedAdaptiveBulkheadOptions, deps: ControllerDeps) {
    this.#aimd = new AimdLimit({
      maxConcurrency: options.maxConcurrency,
      minConcurrency: options.minConcurrency,
      backoffRatio: options.backoffRatio,
      increaseStep: options.increaseStep,
      cooldown: options.cooldown,
      latencyThreshold: options.latencyThreshold,
      window: options.window,
    });
    this.#threshold = options.latencyThreshold;
    this.#deps = deps;
    this.#params =
      options.latencyQuantile === undefined
        ? undefined
        : Object.freeze({ quantile: options.latencyQuantile, window: options.window });
  }

  /** AIMD's float limit, floored: admit while `inUse < floor(limit)`, never below 1. */
  get limit(): number {
    const l = Math.floor(this.#aimd.limit);
    return l > 1 ? l : 1;
  }

  sample(latency: number, outcome: BulkheadOutcome): void {
    if (outcome === 'neutral' || (outcome === 'failure' && !(latency > this.#threshold))) return;
    const deps = this.#deps;
    const now = deps.clock.now();
    const params = this.#params;
    if (params === undefined) {
      this.#aimd.onSample(latency, now);
      return;
    }
    let estimate: number | undefined | Promise<number | undefined>;
    try {
      estimate = deps.digest.observe(deps.key, params, latency, now);
    } catch (error) {
      deps.onStoreError(error);
      return;
    }
    if (!isThenable(estimate)) {
      this.#apply(estimate, now);
      return;
    }
    estimate.then(
      (value) => {
        // Re-read the clock: AIMD's cooldown wants monotonic sample times, and the answer arrives now.
        this.#apply(value, deps.clock.now());
        deps.onAsyncChange();
      },
      (error: unknown) => deps.onStoreError(error),
    );
  }

  #apply(estimate: number | undefined, now: number): void {
    if (estimate === undefined) return; // the digest is warming up
    if (this.#aimd.onSample(estimate, now) !== 'decrease') return;
    const deps = this.#deps;
    try {
      const done = deps.digest.reset(deps.key, now);
      if (isThenable(done)) done.then(undefined, (error: unknown) => deps.onStoreError(error));
    } catch (error) {
      deps.onStoreError(error);
    }
  }
}

/** Netflix `WindowedLimit.DEFAULT_MIN_RTT_THRESHOLD` (100 µs): faster completions are not samples. */
const MIN_RTT_THRESHOLD_MS = 0.1;

/**
 * `gradientBulkhead`: Netflix concurrency-limits' Gradient2 (SPEC §3), fed successful completions only.
 * Failures and neutral outcomes are not samples: a fast error or an abort would read as a tiny RTT and push the
 * limit up (concurrency-limits #176).
 *
 * Like Netflix's deployments, Gradient2 sits behind a sample window (concurrency-limits `WindowedLimit` with its
 * default `AverageSampleWindow`), because one sample per call makes the limit follow latency *variance* rather
 * than capacity (the long-RTT average chases every sample and `headroom` keeps adding: the limit creeps up or pins
 * at its maximum). Per successful completion at `now` with RTT `rtt ≥ 0.1 ms` and in-flight count `inflight`
 * (slots held including the finishing call, read before its release — Netflix's in-flight count at acquire):
 *
 * ```
 * window ← window + (rtt, inflight)              count, sum of RTTs, min RTT, max in-flight
 * if now > nextUpdateAt:                          close the window (always, ready or not)
 *   nextUpdateAt ← now + clamp(2 × window.minRtt, minWindowTime, maxWindowTime)
 *   if window.count ≥ windowSize: Gradient2.onSample({ rtt: window.sum / window.count, inflight: window.maxInflight })
 *   window ← empty                                 (a window with too few samples is discarded)
 * ```
 *
 * The first completion closes a one-sample window (discarded) and starts the first real one, as in Netflix's
 * code (`nextUpdateTime` starts at 0). State is a few numbers; a release allocates nothing.
 */
export class GradientLimitController implements LimitController {
  readonly #gradient: Gradient2Limit;
  readonly #clock: Clock;
  readonly #windowSize: number;
  readonly #minWindowTime: number;
  readonly #maxWindowTime: number;
  /** Reused for every window, so a release allocates nothing. */
  readonly #sample = { rtt: 0, inflight: 0 };
  #limit: number;
  #nextUpdateAt = -Infinity;
  #count = 0;
  #sum = 0;
  #minRtt = Infinity;
  #maxInflight = 0;

  constructor(options: ResolvedGradientBulkheadOptions, deps: Pick<ControllerDeps, 'clock'>) {
    this.#gradient = new Gradient2Limit({
      maxConcurrency: options.maxConcurrency,
      minConcurrency: options.minConcurrency,
      initialLimit: options.initialLimit,
      rttTolerance: options.rttTolerance,
      smoothing: options.smoothing,
      longWindow: options.longWindow,
      headroom: options.headroom,
    });
    this.#clock = deps.clock;
    this.#windowSize = options.windowSize;
    this.#minWindowTime = options.minWindowTime;
    this.#maxWindowTime = options.maxWindowTime;
    this.#limit = Math.max(1, this.#gradient.limit);
  }

  get limit(): number {
    return this.#limit;
  }

  sample(latency: number, outcome: BulkheadOutcome, inflight: number): void {
    if (outcome !== 'success' || !(latency >= MIN_RTT_THRESHOLD_MS)) return;
    this.#count++;
    this.#sum += latency;
    if (latency < this.#minRtt) this.#minRtt = latency;
    if (inflight > this.#maxInflight) this.#maxInflight = inflight;
    const now = this.#clock.now();
    if (!(now > this.#nextUpdateAt)) return;
    this.#nextUpdateAt = now + Math.min(Math.max(2 * this.#minRtt, this.#minWindowTime), this.#maxWindowTime);
    if (this.#count >= this.#windowSize) {
      const s = this.#sample;
      s.rtt = this.#sum / this.#count;
      s.inflight = this.#maxInflight;
      this.#limit = Math.max(1, this.#gradient.onSample(s));
    }
    this.#count = 0;
    this.#sum = 0;
    this.#minRtt = Infinity;
    this.#maxInflight = 0;
  }
}
