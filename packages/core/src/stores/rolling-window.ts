import { BREAKER_BUCKETS } from './ports';

/**
 * Calls and failures over the last `samplingWindow` ms, kept as {@link BREAKER_BUCKETS} time buckets of
 * `samplingWindow / BREAKER_BUCKETS` ms each (SPEC §4: a *rolling* window, §10). Bucket `k` covers
 * `[k·width, (k+1)·width)` of the caller's clock; the window at `now` is the bucket holding `now` and the nine
 * before it, so a sample leaves the window exactly when its bucket is ten buckets old.
 *
 * Why buckets, not a ring of timestamps: constant memory and O(1) amortised work per sample whatever the rate.
 * The Redis breaker script implements the same arithmetic, so both stores trip on the same inputs.
 */
/** Ring slot of an absolute bucket index (clocks may start below zero). */
const slotOf = (index: number): number => ((index % BREAKER_BUCKETS) + BREAKER_BUCKETS) % BREAKER_BUCKETS;

export class RollingWindow {
  readonly #calls = new Float64Array(BREAKER_BUCKETS);
  readonly #failures = new Float64Array(BREAKER_BUCKETS);
  #width = 0;
  /** Absolute index of the newest bucket; -Infinity while empty. */
  #head = Number.NEGATIVE_INFINITY;
  #totalCalls = 0;
  #totalFailures = 0;

  get calls(): number {
    return this.#totalCalls;
  }

  get failures(): number {
    return this.#totalFailures;
  }

  /**
   * Drops buckets that fell out of the window at `now`. A changed `samplingWindow` (a retune; on Redis, replicas
   * mid-deploy with different configs) re-buckets what is kept, see {@link RollingWindow.#rescale}. A `now` slightly older than the head (a clock that is not
   * monotonic) leaves the window as it is; one a whole window older (a wall clock stepped back, e.g. Redis `TIME`
   * after an NTP step) starts the window over there — else every sample would pile into the newest bucket, which
   * would not roll until the clock caught up again, and the breaker could not trip meanwhile.
   */
  advance(samplingWindow: number, now: number): void {
    const width = samplingWindow / BREAKER_BUCKETS;
    if (width !== this.#width) {
      if (this.#head !== Number.NEGATIVE_INFINITY) this.#rescale(this.#width, width);
      this.#width = width;
    }
    const index = Math.floor(now / width);
    if (index <= this.#head && this.#head - index < BREAKER_BUCKETS) return;
    if (index - this.#head >= BREAKER_BUCKETS || index < this.#head) {
      this.#calls.fill(0);
      this.#failures.fill(0);
      this.#totalCalls = 0;
      this.#totalFailures = 0;
    } else {
      for (let k = this.#head + 1; k <= index; k++) {
        const slot = slotOf(k);
        this.#totalCalls -= this.#calls[slot]!;
        this.#totalFailures -= this.#failures[slot]!;
        this.#calls[slot] = 0;
        this.#failures[slot] = 0;
      }
    }
    this.#head = index;
  }

  /** Counts one outcome in the newest bucket; call {@link advance} first. */
  add(failure: boolean): void {
    const slot = slotOf(this.#head);
    this.#calls[slot] = this.#calls[slot]! + 1;
    this.#totalCalls++;
    if (failure) {
      this.#failures[slot] = this.#failures[slot]! + 1;
      this.#totalFailures++;
    }
  }

  /**
   * Re-buckets the window from width `from` to width `to`: each old bucket's counts move to the new bucket holding
   * that bucket's start, and what falls outside the new window is dropped. Outcomes keep (about) their times, so a
   * retune neither forgets a breaker that is about to trip nor lets alternating configs wipe each other's
   * outcomes. The Redis breaker script does the same arithmetic, in the same order.
   */
  #rescale(from: number, to: number): void {
    const head = this.#head;
    const calls = new Float64Array(BREAKER_BUCKETS);
    const failures = new Float64Array(BREAKER_BUCKETS);
    const newHead = Math.floor((head * from) / to);
    let totalCalls = 0;
    let totalFailures = 0;
    for (let k = head - BREAKER_BUCKETS + 1; k <= head; k++) {
      const slot = slotOf(k);
      const c = this.#calls[slot]!;
      const f = this.#failures[slot]!;
      if (c === 0 && f === 0) continue;
      const index = Math.floor((k * from) / to);
      if (index <= newHead - BREAKER_BUCKETS) continue;
      const target = slotOf(index);
      calls[target] = calls[target]! + c;
      failures[target] = failures[target]! + f;
      totalCalls += c;
      totalFailures += f;
    }
    this.#calls.set(calls);
    this.#failures.set(failures);
    this.#totalCalls = totalCalls;
    this.#totalFailures = totalFailures;
    this.#head = newHead;
  }

  /** Calls and failures the window would hold at `now` for `samplingWindow`, leaving this window untouched. */
  peek(samplingWindow: number, now: number): { calls: number; failures: number } {
    const copy = new RollingWindow();
    copy.#calls.set(this.#calls);
    copy.#failures.set(this.#failures);
    copy.#width = this.#width;
    copy.#head = this.#head;
    copy.#totalCalls = this.#totalCalls;
    copy.#totalFailures = this.#totalFailures;
    copy.advance(samplingWindow, now);
    return { calls: copy.#totalCalls, failures: copy.#totalFailures };
  }

  clear(): void {
    this.#calls.fill(0);
    this.#failures.fill(0);
    this.#totalCalls = 0;
    this.#totalFailures = 0;
    this.#head = Number.NEGATIVE_INFINITY;
  }
}
