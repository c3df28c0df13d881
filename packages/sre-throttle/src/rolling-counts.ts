/**
 * Requests and accepts over the last `window` ms, kept as {@link THROTTLE_BUCKETS} time buckets of
 * `window / THROTTLE_BUCKETS` ms each. The SRE book counts them "over the last two minutes" (Google, _Site
 * Reliability Engineering_, ch. 21 "Handling Overload"): a *rolling* window, so an outage's counts age out one bucket
 * at a time and recovery is bounded by the window. (Counts that reset every `window` instead could keep a whole
 * outage in view for almost two windows, shedding healthy traffic meanwhile.) The same arithmetic as core's
 * circuit-breaker window (packages/core/src/stores/rolling-window.ts), which this package cannot import.
 *
 * Bucket `b` covers `[b·width, (b+1)·width)` of the caller's clock; the window at `now` is the bucket holding `now`
 * and the {@link THROTTLE_BUCKETS} − 1 before it. So an event at `t` is counted at `now` exactly when
 * `floor(now / width) − floor(t / width) < THROTTLE_BUCKETS`: always when `now − t < window − width`, never when
 * `now − t ≥ window`. Constant memory and O(1) amortised work per event, whatever the rate.
 * @public
 */
export const THROTTLE_BUCKETS = 10;

/** Ring slot of an absolute bucket index (clocks may start below zero). */
const slotOf = (index: number): number => ((index % THROTTLE_BUCKETS) + THROTTLE_BUCKETS) % THROTTLE_BUCKETS;

/** @internal */
export class RollingCounts {
  private readonly requestBuckets = new Float64Array(THROTTLE_BUCKETS);
  private readonly acceptBuckets = new Float64Array(THROTTLE_BUCKETS);
  private readonly window: number;
  /** Absolute index of the newest bucket; -Infinity while nothing was counted. */
  private head = Number.NEGATIVE_INFINITY;
  /** Sums over the buckets in the window. */
  requests = 0;
  accepts = 0;

  constructor(window: number) {
    this.window = window;
  }

  /**
   * Drops the buckets that left the window at `now`. A `now` slightly older than the newest bucket (a clock that is
   * not monotonic) counts in the newest bucket; one a whole window older (a wall clock stepped back) starts the
   * window over there — else events would pile into a bucket that would not age out until the clock caught up.
   */
  advance(now: number): void {
    // now·N / window rather than now / (window / N): exact for integer ms, so a bucket boundary never moves by a
    // rounding error and an event exactly `window` old is always out.
    const index = Math.floor((now * THROTTLE_BUCKETS) / this.window);
    const head = this.head;
    if (index <= head && head - index < THROTTLE_BUCKETS) return;
    if (index - head >= THROTTLE_BUCKETS || index < head) {
      this.requestBuckets.fill(0);
      this.acceptBuckets.fill(0);
      this.requests = 0;
      this.accepts = 0;
    } else {
      for (let b = head + 1; b <= index; b++) {
        const slot = slotOf(b);
        this.requests -= this.requestBuckets[slot]!;
        this.accepts -= this.acceptBuckets[slot]!;
        this.requestBuckets[slot] = 0;
        this.acceptBuckets[slot] = 0;
      }
    }
    this.head = index;
  }

  /** Counts one request (and one accept when `accepted`) in the newest bucket; call {@link advance} first. */
  add(accepted: boolean): void {
    const slot = slotOf(this.head);
    this.requestBuckets[slot] = this.requestBuckets[slot]! + 1;
    this.requests++;
    if (accepted) {
      this.acceptBuckets[slot] = this.acceptBuckets[slot]! + 1;
      this.accepts++;
    }
  }
}
