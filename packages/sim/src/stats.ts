/** Small statistics used by the metrics and the scenarios. */

/** The `p`-quantile (0..1) of an ascending array, nearest-rank; NaN when empty. */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const rank = Math.ceil(p * n);
  return sorted[Math.min(n - 1, Math.max(0, rank - 1))]!;
}

/** Latency summary of a set of samples (ms). */
export interface Percentiles {
  readonly count: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** Sorts a copy of `values` and reads the usual percentiles. */
export function percentiles(values: ArrayLike<number>): Percentiles {
  const s = Float64Array.from(values as ArrayLike<number>).sort();
  let sum = 0;
  for (let i = 0; i < s.length; i++) sum += s[i]!;
  return {
    count: s.length,
    mean: s.length === 0 ? NaN : sum / s.length,
    p50: quantileSorted(s, 0.5),
    p90: quantileSorted(s, 0.9),
    p99: quantileSorted(s, 0.99),
    p999: quantileSorted(s, 0.999),
    max: s.length === 0 ? NaN : s[s.length - 1]!,
  };
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/**
 * Jain's fairness index (Jain, Chiu & Hawe, DEC-TR-301, 1984): `(Σx)² / (n·Σx²)`, 1 when every party gets the
 * same share, 1/n when one gets everything. Used on the admitted rates of uncoordinated replicas.
 */
export function jainIndex(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let s = 0;
  let s2 = 0;
  for (const v of values) {
    s += v;
    s2 += v * v;
  }
  return s2 === 0 ? 1 : (s * s) / (values.length * s2);
}

/** A sampled trajectory: `t[i]` (ms) and `v[i]`. */
export interface Trajectory {
  readonly t: readonly number[];
  readonly v: readonly number[];
}

/**
 * How long after `from` the trajectory takes to settle: the first sample time (relative to `from`) after which
 * every sample up to `to` stays within `band` (relative, e.g. 0.2 = ±20%, with an absolute floor of `minBand`)
 * of the settled value — the median of the last quarter of the window. Returns NaN when it never settles inside
 * the window (the last sample is outside the band).
 */
export function settlingTime(
  tr: Trajectory,
  from: number,
  to: number,
  options: { band?: number; minBand?: number } = {},
): { time: number; settled: number } {
  const band = options.band ?? 0.2;
  const minBand = options.minBand ?? 1;
  const idx: number[] = [];
  for (let i = 0; i < tr.t.length; i++) if (tr.t[i]! >= from && tr.t[i]! < to) idx.push(i);
  if (idx.length === 0) return { time: NaN, settled: NaN };
  const tail = idx.slice(Math.floor(idx.length * 0.75)).map((i) => tr.v[i]!);
  const settled = quantileSorted(
    [...tail].sort((a, b) => a - b),
    0.5,
  );
  const tol = Math.max(minBand, Math.abs(settled) * band);
  let lastOut = -1;
  for (let k = 0; k < idx.length; k++) if (Math.abs(tr.v[idx[k]!]! - settled) > tol) lastOut = k;
  if (lastOut === idx.length - 1) return { time: NaN, settled };
  const firstIn = idx[lastOut + 1]!;
  return { time: tr.t[firstIn]! - from, settled };
}
