import { OptionProblems } from './option-checks';

/** Options of {@link TokenBucket}. All durations are milliseconds. @public */
export interface TokenBucketOptions {
  /** Tokens added per `per` milliseconds (> 0). */
  readonly permits: number;
  /** Refill period in milliseconds (> 0). */
  readonly per: number;
  /** Capacity: the largest burst admitted at once (≥ 1, default `permits`). */
  readonly burst?: number | undefined;
}

/** Resolved, frozen options of a {@link TokenBucket}. @public */
export interface ResolvedTokenBucketOptions {
  readonly permits: number;
  readonly per: number;
  readonly burst: number;
}

const isFinitePositive = (x: unknown): x is number => typeof x === 'number' && x > 0 && x < Infinity;

/**
 * Tokens within this of `n` count as `n`. Refill is float arithmetic: after waiting exactly `msUntil(now, n)` the
 * bucket can hold `n − 1e-13` tokens, and a caller honouring Retry-After would be refused again with a wait of
 * 1e-13 ms, below a clock's resolution. The rounding of `fullAt − now` grows with the clock's value (a few ulps of
 * `now`), so the tolerance does too; a billionth of a token early is no overdraft.
 *
 * Capped at half a token (half of `n` when `n < 1`): at epoch-ms clock values and rates of several hundred
 * thousand per second a few ulps of `now` are worth more than a token, and an uncapped tolerance of `n` or more
 * admitted every take — no limit at all. With the cap an admission still needs more than half of `n` available.
 */
function tolerance(t: number, msPerToken: number, n: number): number {
  const tol = 1e-9 + (Math.abs(t) * 2 ** -50) / msPerToken;
  const cap = n < 1 ? n / 2 : 0.5;
  return tol < cap ? tol : cap;
}

/**
 * A token bucket that starts full and refills continuously at `permits / per` tokens per millisecond up to
 * `burst` — the classic shaper of J. Turner, "New directions in communications (or which way to the information
 * age?)", IEEE Communications Magazine 24(10), 1986, and the rate limiter of most APIs.
 *
 * Why no refill loop: the state is the time `fullAt` at which the bucket will be full again (the "theoretical
 * arrival time" of GCRA, ITU-T I.371). Tokens at `now` are `burst − max(0, fullAt − now)·permits/per`, so refill is
 * implicit, exact for whole-millisecond clocks whose `per/permits` is exact, and free of accumulated rounding; a
 * take only moves `fullAt` forward by `n·per/permits`.
 *
 * Why `fullAt` carries a low part (`fullAt + fullAtLow`, an unevaluated double-double sum): `fullAt` has the clock's
 * magnitude, and at epoch milliseconds (ulp 2⁻¹², ~0.24 µs) adding one token's period rounded every take to whole
 * ulps of the clock — at a million tokens per second 2.4 % more than the rate was admitted, at ten million every
 * take was (the period vanished in the rounding). The low part keeps each take's exact rounding error, so the rate
 * holds at any clock value, while `fullAt` itself stays on the clock's own grid: a caller who waits `msUntil` lands
 * on it, off by less than an ulp of the clock (inside the tolerance) and never by an error that accumulates.
 *
 * Time is an argument. A `now` earlier than one already seen is treated as that later time, so the bucket never
 * gains tokens from a clock that steps back. `tryTake` allocates nothing.
 * @public
 */
export class TokenBucket {
  readonly options: ResolvedTokenBucketOptions;
  /** Milliseconds that refill one token. */
  private readonly msPerToken: number;
  /** When the bucket is (or was) full again, to the clock's precision; −∞ = full from the start. */
  private fullAt = -Infinity;
  /** The rest of that instant below `fullAt`'s precision (|fullAtLow| ≤ half an ulp of `fullAt`). */
  private fullAtLow = 0;
  /** Latest `now` seen, so time never runs backwards. */
  private latest = -Infinity;

  constructor(options: TokenBucketOptions) {
    const { permits, per } = options;
    const burst = options.burst ?? permits;
    new OptionProblems('TokenBucket')
      .check(isFinitePositive(permits), 'permits', 'a finite number > 0', permits)
      .check(isFinitePositive(per), 'per', 'a finite number of ms > 0', per)
      .check(isFinitePositive(burst) && burst >= 1, 'burst', 'a finite number ≥ 1', burst)
      // A token period that overflows (a rate under ~1e-308 per ms) made a take of 0 store NaN and refill the bucket.
      .check(
        !(isFinitePositive(permits) && isFinitePositive(per)) || per / permits < Infinity,
        'per / permits',
        'a finite number of ms per token',
        per / permits,
      )
      .throwIfAny();
    this.options = Object.freeze({ permits, per, burst });
    this.msPerToken = per / permits;
  }

  /** Tokens available at `now`, in [0, burst] (fractional while refilling). */
  tokens(now: number): number {
    return this.available(this.advance(now, 'tokens'));
  }

  /**
   * Takes `n` tokens if that many are available at `now` and returns true; otherwise takes nothing and returns
   * false. O(1), allocation-free. Throws a `RangeError` for a negative or NaN `n`, or a non-finite `now`.
   */
  tryTake(now: number, n = 1): boolean {
    if (!(n >= 0)) throw new RangeError(`TokenBucket.tryTake: n must be ≥ 0, got ${n}`);
    const t = this.advance(now, 'tryTake');
    // More than the bucket can ever hold is never granted, however the rounding allowance falls (msUntil: ∞).
    if (n > this.options.burst || this.available(t) + tolerance(t, this.msPerToken, n) < n) return false;
    // fullAt = max(fullAt, t) + n·per/permits, in double-double: TwoSum keeps the addition's exact rounding error.
    const owing = this.fullAt - t + this.fullAtLow > 0;
    const high = owing ? this.fullAt : t;
    const add = n * this.msPerToken;
    const sum = high + add;
    // Past the largest double the bucket is empty for good (as a one-number fullAt was): TwoSum would give NaN,
    // which reads as a full bucket.
    if (!(sum < Infinity)) {
      this.fullAt = Infinity;
      this.fullAtLow = 0;
      return true;
    }
    const virtual = sum - high;
    const low = (owing ? this.fullAtLow : 0) + (high - (sum - virtual) + (add - virtual));
    const total = sum + low;
    this.fullAt = total;
    this.fullAtLow = total - total === 0 ? low - (total - sum) : 0;
    return true;
  }

  /**
   * Milliseconds from `now` until `n` tokens are available: 0 when they already are, `Infinity` when `n > burst`
   * (it never will be). Suited to a `Retry-After` header (round up to whole seconds there).
   */
  msUntil(now: number, n = 1): number {
    if (!(n >= 0)) throw new RangeError(`TokenBucket.msUntil: n must be ≥ 0, got ${n}`);
    const t = this.advance(now, 'msUntil');
    const { burst } = this.options;
    if (n > burst) return Infinity;
    // Unclamped: a take admitted within the tolerance leaves the bucket owing a little more than it held, and the
    // wait includes that (tokens(now) shows 0). Clamped, a caller honouring every wait fell further behind the
    // bucket on each take until a take was refused.
    const waitMs = this.fullAt - t + this.fullAtLow - (burst - n) * this.msPerToken;
    if (!(waitMs > tolerance(t, this.msPerToken, n) * this.msPerToken)) return 0;
    return waitMs;
  }

  /**
   * The time to use for `now`: the latest seen. A non-finite `now` throws (NaN, ±Infinity): `Infinity` would become
   * the latest time for good and every later take would be admitted; NaN or −Infinity on a fresh bucket admitted
   * every take too.
   */
  private advance(now: number, method: string): number {
    if (!(now - now === 0))
      throw new RangeError(`TokenBucket.${method}: now must be a finite number of ms, got ${now}`);
    if (now > this.latest) this.latest = now;
    return this.latest;
  }

  private available(t: number): number {
    const debtMs = this.fullAt - t + this.fullAtLow;
    if (!(debtMs > 0)) return this.options.burst;
    const tokens = this.options.burst - debtMs / this.msPerToken;
    return tokens > 0 ? tokens : 0;
  }
}
