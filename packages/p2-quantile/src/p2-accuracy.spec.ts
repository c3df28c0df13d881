import { seededRandom } from '@ballast/testing';
import { P2Quantile } from './p2-quantile';

/**
 * Accuracy of P² against exact quantiles on large seeded streams. Two measures:
 * - rank error: |F̂(estimate) − p|, the fraction of the stream between the estimate and the true quantile;
 * - relative error: |estimate − exact| / exact.
 * The bounds asserted here are the ones written in the README (measured worst case over the seeds, rounded up).
 */
const STREAM = 50_000;
const SEEDS = [1, 2, 3];
const QUANTILES = [0.5, 0.9, 0.95, 0.99] as const;

type Sampler = (random: () => number) => number;
const normal = (random: () => number): number =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const DISTRIBUTIONS: Record<string, Sampler> = {
  uniform: (random) => random(),
  exponential: (random) => -Math.log(1 - random()),
  lognormal: (random) => Math.exp(normal(random)),
  // 70 % fast path around 10 ms, 30 % slow path around 100 ms: latency with a cache miss.
  bimodal: (random) => (random() < 0.7 ? 10 + normal(random) : 100 + 5 * normal(random)),
};

/** Worst rank error and worst relative error, per distribution and quantile (README table). */
const BOUNDS: Record<string, Record<(typeof QUANTILES)[number], { rank: number; relative: number }>> = {
  uniform: {
    0.5: { rank: 0.001, relative: 0.002 },
    0.9: { rank: 0.001, relative: 0.0005 },
    0.95: { rank: 0.001, relative: 0.0005 },
    0.99: { rank: 0.001, relative: 0.0005 },
  },
  exponential: {
    0.5: { rank: 0.001, relative: 0.003 },
    0.9: { rank: 0.001, relative: 0.003 },
    0.95: { rank: 0.001, relative: 0.005 },
    0.99: { rank: 0.001, relative: 0.01 },
  },
  lognormal: {
    0.5: { rank: 0.001, relative: 0.0005 },
    0.9: { rank: 0.001, relative: 0.006 },
    0.95: { rank: 0.001, relative: 0.003 },
    0.99: { rank: 0.001, relative: 0.025 },
  },
  bimodal: {
    0.5: { rank: 0.015, relative: 0.006 },
    0.9: { rank: 0.001, relative: 0.0005 },
    0.95: { rank: 0.001, relative: 0.0005 },
    0.99: { rank: 0.001, relative: 0.0005 },
  },
};

function rankOf(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo / sorted.length;
}

describe('P2Quantile — accuracy against exact quantiles (50 000 samples, 3 seeds)', () => {
  for (const [name, sample] of Object.entries(DISTRIBUTIONS)) {
    it(`${name}: p = 0.5, 0.9, 0.95, 0.99 stay within the README bounds`, () => {
      const worst = QUANTILES.map(() => ({ rank: 0, relative: 0 }));
      for (const seed of SEEDS) {
        const random = seededRandom(seed);
        const estimators = QUANTILES.map((p) => new P2Quantile(p));
        const stream = new Float64Array(STREAM);
        for (let i = 0; i < STREAM; i++) {
          const x = sample(random);
          stream[i] = x;
          for (const e of estimators) e.add(x);
        }
        stream.sort();
        QUANTILES.forEach((p, j) => {
          const estimate = estimators[j]!.value()!;
          const exact = stream[Math.ceil(p * STREAM) - 1]!;
          worst[j]!.rank = Math.max(worst[j]!.rank, Math.abs(rankOf(stream, estimate) - p));
          worst[j]!.relative = Math.max(worst[j]!.relative, Math.abs(estimate - exact) / Math.abs(exact));
        });
      }
      if (process.env.P2_REPORT) QUANTILES.forEach((p, j) => console.log(name, p, worst[j]));
      QUANTILES.forEach((p, j) => {
        expect(worst[j]!.rank).toBeLessThanOrEqual(BOUNDS[name]![p].rank);
        expect(worst[j]!.relative).toBeLessThanOrEqual(BOUNDS[name]![p].relative);
      });
    });
  }
});
