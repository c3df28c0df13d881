import { constant, exponential, lognormal, withStragglers } from './distributions';
import { mulberry32 } from './seeded-random';
import { percentiles } from './stats';

const draws = (d: { sample: (r: () => number) => number }, n = 200_000): number[] => {
  const r = mulberry32(3);
  return Array.from({ length: n }, () => d.sample(r));
};

describe('distributions', () => {
  it('exponential: sample mean and p99 match the analytic values (p99 = mean·ln 100)', () => {
    const p = percentiles(draws(exponential(20)));
    expect(p.mean).toBeCloseTo(20, 0);
    expect(p.p99 / (20 * Math.log(100))).toBeGreaterThan(0.95);
    expect(p.p99 / (20 * Math.log(100))).toBeLessThan(1.05);
  });

  it('lognormal: median and mean match median and median·e^(σ²/2)', () => {
    const d = lognormal({ median: 10, sigma: 0.5 });
    const p = percentiles(draws(d));
    expect(p.p50).toBeGreaterThan(9.8);
    expect(p.p50).toBeLessThan(10.2);
    expect(p.mean / d.mean).toBeGreaterThan(0.98);
    expect(p.mean / d.mean).toBeLessThan(1.02);
  });

  it('stragglers: about `probability` of draws are `factor`× slower, and the mean says so', () => {
    const d = withStragglers(constant(10), { probability: 0.01, factor: 10 });
    const xs = draws(d);
    const slow = xs.filter((x) => x === 100).length / xs.length;
    expect(slow).toBeGreaterThan(0.009);
    expect(slow).toBeLessThan(0.011);
    expect(d.mean).toBeCloseTo(10.9, 9);
    expect(d.label).toMatch(/1% stragglers ×10/);
  });

  it('rejects invalid parameters', () => {
    expect(() => exponential(0)).toThrow(/> 0/);
    expect(() => lognormal({ median: 1, sigma: -1 })).toThrow(/sigma/);
    expect(() => withStragglers(constant(1), { probability: 2, factor: 3 })).toThrow(/probability/);
  });
});
