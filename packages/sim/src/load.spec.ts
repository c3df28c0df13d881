import { PoissonArrivals, type Arrival } from './load';
import { steps } from './schedule';
import { mulberry32 } from './seeded-random';
import { VirtualClock } from './virtual-clock';

async function collect(arr: PoissonArrivals, until: number): Promise<{ t: number; a: Arrival }[]> {
  const clock = new VirtualClock();
  const out: { t: number; a: Arrival }[] = [];
  arr.start(clock, until, (a) => out.push({ t: clock.now(), a }));
  await clock.runUntil(until + 1000);
  return out;
}

describe('PoissonArrivals', () => {
  it('arrives at the configured rate with exponential gaps (mean and CV ≈ 1)', async () => {
    const out = await collect(new PoissonArrivals({ rate: 200 }, 1, mulberry32(5)), 100_000);
    expect(out.length / 100).toBeGreaterThan(195);
    expect(out.length / 100).toBeLessThan(205);
    const gaps = out.slice(1).map((x, i) => x.t - out[i]!.t);
    const m = gaps.reduce((s, g) => s + g, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((s, g) => s + (g - m) ** 2, 0) / gaps.length);
    expect(sd / m).toBeGreaterThan(0.95);
    expect(sd / m).toBeLessThan(1.05);
    expect(out.every((x) => x.t < 100_000)).toBe(true);
  });

  it('follows a step schedule, including zero-rate phases', async () => {
    const out = await collect(
      new PoissonArrivals({ rate: steps([0, 100], [10_000, 0], [20_000, 400]) }, 1, mulberry32(6)),
      30_000,
    );
    const count = (a: number, b: number): number => out.filter((x) => x.t >= a && x.t < b).length;
    expect(count(0, 10_000)).toBeGreaterThan(900);
    expect(count(0, 10_000)).toBeLessThan(1100);
    expect(count(10_000, 20_000)).toBe(0);
    expect(count(20_000, 30_000)).toBeGreaterThan(3700);
    expect(count(20_000, 30_000)).toBeLessThan(4300);
  });

  it('splits by criticality and replica weights', async () => {
    const out = await collect(
      new PoissonArrivals(
        { rate: 1000, criticality: { CRITICAL: 1, BEST_EFFORT: 3 }, replicaWeights: [1, 1, 2] },
        3,
        mulberry32(7),
      ),
      20_000,
    );
    const frac = (f: (a: Arrival) => boolean): number => out.filter((x) => f(x.a)).length / out.length;
    expect(frac((a) => a.criticality === 3)).toBeCloseTo(0.25, 1);
    expect(frac((a) => a.criticality === 0)).toBeCloseTo(0.75, 1);
    expect(frac((a) => a.criticality === 2)).toBe(0);
    expect(frac((a) => a.replica === 2)).toBeCloseTo(0.5, 1);
  });

  it('replica weights may be schedules: a replica joins mid-run', async () => {
    const out = await collect(
      new PoissonArrivals({ rate: 1000, replicaWeights: [1, steps([0, 0], [5000, 1])] }, 2, mulberry32(8)),
      10_000,
    );
    expect(out.filter((x) => x.t < 5000 && x.a.replica === 1)).toHaveLength(0);
    const late = out.filter((x) => x.t >= 5000);
    expect(late.filter((x) => x.a.replica === 1).length / late.length).toBeCloseTo(0.5, 1);
  });

  it('rejects bad options', () => {
    const r = mulberry32(1);
    expect(() => new PoissonArrivals({ rate: -1 }, 1, r)).toThrow(/rate/);
    expect(() => new PoissonArrivals({ rate: 1, replicaWeights: [1] }, 2, r)).toThrow(
      /one weight per replica/,
    );
    expect(() => new PoissonArrivals({ rate: 1, criticality: { NORMAL: 0 } }, 1, r)).toThrow(/at least one/);
  });
});
