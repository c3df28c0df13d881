import { seededRandom } from '../seeded-random';
import { useBench, type ConformanceOptions, type StoreSetup, type TestBench } from './harness';
import type { ConformanceKey, DigestParamsShape, LatencyDigestStoreShape } from './store-shapes';

type Bench = TestBench<LatencyDigestStoreShape>;

/** A deterministic shuffle of 1..n (so the estimate sees an unsorted stream). */
function shuffled(n: number, seed: number): number[] {
  const xs = Array.from({ length: n }, (_, i) => i + 1);
  const random = seededRandom(seed);
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

async function feed(b: Bench, key: ConformanceKey, p: DigestParamsShape, samples: readonly number[]) {
  let last: number | undefined;
  for (const x of samples) last = await b.store.observe(key, p, x, b.now());
  return last;
}

/**
 * The contract of a `LatencyDigestStore` (SPEC §3 windowed quantile, §7): undefined while warming, an estimate
 * near the true quantile once an epoch of `window` samples is complete, old latency ageing out within two windows,
 * and `reset` opening a fresh epoch. Implementations may warm faster (the in-memory P² answers after five
 * samples) but never answer with fewer than five, and always answer after one full window.
 */
export function describeLatencyDigestStoreConformance(
  name: string,
  setup: StoreSetup<LatencyDigestStoreShape>,
  options: ConformanceOptions = {},
): void {
  describe(`LatencyDigestStore conformance: ${name}`, () => {
    if (options.timeout !== undefined) jest.setTimeout(options.timeout);
    const bench = useBench(setup, options);
    const p90: DigestParamsShape = { quantile: 0.9, window: 200 };

    it('is undefined on a fresh key and while fewer than five samples were seen', async () => {
      const b = bench();
      const key = b.key();
      expect(await b.store.read(key, p90, b.now())).toBeUndefined();
      for (const x of [10, 20, 30, 40]) expect(await b.store.observe(key, p90, x, b.now())).toBeUndefined();
      expect(await b.store.read(key, p90, b.now())).toBeUndefined();
    });

    it('answers after one full window, near the true quantile', async () => {
      const b = bench();
      const key = b.key();
      const last = await feed(b, key, p90, shuffled(p90.window, 1));
      expect(last).toBeDefined();
      const more = await feed(b, key, p90, shuffled(p90.window, 2));
      expect(more).toBeGreaterThan(0.9 * 180);
      expect(more).toBeLessThan(1.1 * 180);
      expect(await b.store.read(key, p90, b.now())).toBe(more);
    });

    it('estimates each quantile of a skewed distribution within a few percent', async () => {
      const b = bench();
      const key = b.key();
      const p50 = { quantile: 0.5, window: 1000 };
      const p99 = { quantile: 0.99, window: 1000 };
      // exponential-ish latencies: the 1000 quantiles of Exp(mean 20) + 5, shuffled
      const samples = shuffled(1000, 3).map((i) => 5 - 20 * Math.log(1 - (i - 0.5) / 1000));
      for (let round = 0; round < 2; round++) {
        for (const x of samples) {
          await b.store.observe(key, p50, x, b.now());
          await b.store.observe(key, p99, x, b.now());
        }
      }
      const median = 5 + 20 * Math.LN2;
      const tail = 5 - 20 * Math.log(0.01);
      const m = await b.store.read(key, p50, b.now());
      const t = await b.store.read(key, p99, b.now());
      expect(Math.abs(m! - median) / median).toBeLessThan(0.05);
      expect(Math.abs(t! - tail) / tail).toBeLessThan(0.05);
    });

    it('forgets old latency within two windows of a shift', async () => {
      const b = bench();
      const key = b.key();
      const p = { quantile: 0.5, window: 100 };
      await feed(
        b,
        key,
        p,
        shuffled(300, 4).map((i) => 10 + i / 100),
      );
      const before = await b.store.read(key, p, b.now());
      expect(before).toBeLessThan(15);
      const after = await feed(
        b,
        key,
        p,
        shuffled(200, 5).map((i) => 200 + i / 10),
      );
      expect(after).toBeGreaterThan(200 * 0.97);
      expect(after).toBeLessThan(220 * 1.03);
    });

    it('reset opens a fresh epoch: undefined again until it warms up', async () => {
      const b = bench();
      const key = b.key();
      await feed(b, key, p90, shuffled(2 * p90.window, 6));
      expect(await b.store.read(key, p90, b.now())).toBeDefined();
      await b.store.reset(key, b.now());
      expect(await b.store.read(key, p90, b.now())).toBeUndefined();
      for (const x of [1, 2, 3, 4]) expect(await b.store.observe(key, p90, x, b.now())).toBeUndefined();
      const warm = await feed(b, key, p90, shuffled(p90.window, 7));
      expect(warm).toBeGreaterThan(0.9 * 180);
      expect(warm).toBeLessThan(1.1 * 180);
    });

    it('keeps keys and quantiles independent', async () => {
      const b = bench();
      const slow = b.key('slow');
      const fast = b.key('fast');
      await feed(
        b,
        slow,
        p90,
        shuffled(2 * p90.window, 8).map((i) => 1000 + i),
      );
      await feed(b, fast, p90, shuffled(2 * p90.window, 9));
      expect(await b.store.read(slow, p90, b.now())).toBeGreaterThan(1000);
      expect(await b.store.read(fast, p90, b.now())).toBeLessThan(400);
      expect(await b.store.read(fast, { quantile: 0.5, window: p90.window }, b.now())).toBeUndefined();
      for (const other of [b.keyOf(slow.policy, 'fast'), b.keyOf(slow.policy, undefined), b.key('slow')]) {
        expect(await b.store.read(other, p90, b.now())).toBeUndefined();
      }
    });
  });
}
