/**
 * The long-term ("no load") RTT of Gradient2: the plain mean of the first `warmup` samples, then an exponential
 * moving average with factor `2 / (window + 1)` — Netflix concurrency-limits `ExpAvgMeasurement(window, 10)`.
 *
 * Why the warm-up mean: an EMA seeded with the first sample would weigh that one sample as if it stood for the
 * whole window; averaging the first ten gives the EMA a sound starting point.
 * @internal
 */
export class LongRtt {
  private readonly factor: number;
  private sum = 0;
  private count = 0;
  private current = 0;

  constructor(
    window: number,
    private readonly warmup: number,
  ) {
    this.factor = 2 / (window + 1);
  }

  /** The stored value (0 before any sample). */
  get value(): number {
    return this.current;
  }

  /** Adds a sample and returns the updated value. */
  add(sample: number): number {
    if (this.count < this.warmup) {
      this.count++;
      this.sum += sample;
      this.current = this.sum / this.count;
    } else {
      this.current = this.current * (1 - this.factor) + sample * this.factor;
    }
    return this.current;
  }

  /** Multiplies the stored value (the drift decay); later samples build on the decayed value. */
  scale(multiplier: number): void {
    this.current *= multiplier;
  }
}
