import { OptionProblems, isOpenUnit } from './option-checks';

/**
 * Plain-data snapshot of a {@link P2Quantile}. Positions are 1-based, as in the paper's tables.
 * @public
 */
export interface P2QuantileJSON {
  readonly p: number;
  readonly count: number;
  /** Marker heights q₁…q₅ (the first `count` raw observations, sorted, before five have been seen). */
  readonly heights: number[];
  /** Actual marker positions n₁…n₅ (empty before five observations). */
  readonly positions: number[];
  /** Desired marker positions n′₁…n′₅ (empty before five observations). */
  readonly desired: number[];
}

/** Resolved, frozen options of a {@link P2Quantile}. @public */
export interface P2QuantileOptions {
  readonly p: number;
}

const MARKERS = 5;

/**
 * Streaming estimate of the p-quantile in O(1) time and memory: the P² algorithm of R. Jain and I. Chlamtac,
 * "The P² Algorithm for Dynamic Calculation of Quantiles and Histograms Without Storing Observations",
 * Communications of the ACM 28(10), 1985, pp. 1076–1085.
 *
 * Five markers track the minimum, the p/2, p and (1+p)/2 quantiles, and the maximum. Each observation shifts the
 * positions of the markers above it; a middle marker that drifts one or more positions from where it should be
 * moves by one, and its height is re-estimated with a piecewise-parabolic (P²) fit through its neighbours,
 * falling back to linear interpolation when the parabola would break monotonicity.
 *
 * Why positions are recomputed: the paper accumulates `n′ᵢ += dn′ᵢ` every step, so rounding error grows with the
 * count. Here the desired positions are computed from the count on every step (`n′ᵢ = 1 + (N − 1)·dn′ᵢ`), which is
 * the same value without the drift (SPEC §3).
 *
 * Non-finite observations (NaN, ±Infinity) are ignored. `add` allocates nothing. Single-threaded JS: not meant to
 * be shared across workers.
 * @public
 */
export class P2Quantile {
  readonly options: P2QuantileOptions;
  /** Marker heights q₁…q₅ (index 0…4). */
  private readonly q = new Float64Array(MARKERS);
  /** Marker positions, 0-based (the paper's nᵢ − 1). */
  private readonly n = new Float64Array(MARKERS);
  /** Desired-position increments dn′ᵢ = 0, p/2, p, (1+p)/2, 1. */
  private readonly dn: Float64Array;
  private observations = 0;

  constructor(p: number) {
    new OptionProblems('P2Quantile').check(isOpenUnit(p), 'p', 'in (0, 1)', p).throwIfAny();
    this.options = Object.freeze({ p });
    this.dn = Float64Array.of(0, p / 2, p, (1 + p) / 2, 1);
    this.reset();
  }

  /** The quantile this estimator tracks, in (0, 1). */
  get p(): number {
    return this.options.p;
  }

  /** Number of (finite) observations added since construction or the last `reset()`. */
  get count(): number {
    return this.observations;
  }

  /** Adds one observation. O(1), allocation-free. Non-finite values are ignored. */
  add(x: number): void {
    if (!(x - x === 0)) return; // NaN or ±Infinity
    const q = this.q;
    const n = this.n;
    const seen = this.observations;
    if (seen < MARKERS) {
      // Warm-up: keep the first five observations sorted (insertion sort); they become the initial markers.
      let i = seen;
      while (i > 0 && q[i - 1]! > x) {
        q[i] = q[i - 1]!;
        i--;
      }
      q[i] = x;
      this.observations = seen + 1;
      return;
    }

    // B1: find the cell k with q[k] ≤ x < q[k+1], extending the extremes if needed.
    let k: number;
    if (x < q[0]!) {
      q[0] = x;
      k = 0;
    } else if (x >= q[4]!) {
      q[4] = x;
      k = 3;
    } else {
      k = 0;
      while (x >= q[k + 1]!) k++;
    }

    // B2: markers above the cell move up one position; desired positions follow from the count.
    for (let i = k + 1; i < MARKERS; i++) n[i] = n[i]! + 1;
    const count = seen + 1;
    this.observations = count;
    const last = count - 1;

    // B3: adjust the three middle markers by at most one position each.
    for (let i = 1; i <= 3; i++) {
      const ni = n[i]!;
      const d = last * this.dn[i]! - ni;
      const nNext = n[i + 1]!;
      const nPrev = n[i - 1]!;
      if ((d >= 1 && nNext - ni > 1) || (d <= -1 && nPrev - ni < -1)) {
        const s = d >= 1 ? 1 : -1;
        const qi = q[i]!;
        const qNext = q[i + 1]!;
        const qPrev = q[i - 1]!;
        const parabolic =
          qi +
          (s / (nNext - nPrev)) *
            ((ni - nPrev + s) * ((qNext - qi) / (nNext - ni)) +
              (nNext - ni - s) * ((qi - qPrev) / (ni - nPrev)));
        if (qPrev < parabolic && parabolic < qNext) {
          q[i] = parabolic;
        } else {
          const qs = s === 1 ? qNext : qPrev;
          const span = (s === 1 ? nNext : nPrev) - ni;
          let linear = qi + (s * (qs - qi)) / span;
          // Only a spread beyond ±1.8e308 overflows the difference; the convex form cannot.
          if (!(linear - linear === 0)) linear = qi + s * (qs / span - qi / span);
          q[i] = linear;
        }
        n[i] = ni + s;
      }
    }
  }

  /** The current estimate, or `undefined` before five observations. */
  value(): number | undefined {
    return this.observations < MARKERS ? undefined : this.q[2];
  }

  /**
   * `value() > threshold`, false before five observations. Same answer as comparing `value()`, but returns a
   * boolean: a double returned from a call V8 does not inline is boxed, so hot paths that only compare use this.
   */
  exceeds(threshold: number): boolean {
    return this.observations >= MARKERS && this.q[2]! > threshold;
  }

  /** Forgets every observation. */
  reset(): void {
    this.observations = 0;
    this.q.fill(0);
    for (let i = 0; i < MARKERS; i++) this.n[i] = i;
  }

  /** Plain data: marker heights and positions (1-based), for inspection and tests. */
  toJSON(): P2QuantileJSON {
    const warm = this.observations >= MARKERS;
    const last = this.observations - 1;
    return {
      p: this.options.p,
      count: this.observations,
      heights: Array.from(this.q.subarray(0, Math.min(this.observations, MARKERS))),
      positions: warm ? Array.from(this.n, (v) => v + 1) : [],
      desired: warm ? Array.from(this.dn, (inc) => 1 + last * inc) : [],
    };
  }
}
