import fc from 'fast-check';
import { FakeClock, seededRandom } from '@ballast/testing';
import { AdaptiveThrottle } from './adaptive-throttle';
import { THROTTLE_BUCKETS } from './rolling-counts';

describe('AdaptiveThrottle — options', () => {
  it('resolves the SPEC defaults and freezes them', () => {
    const throttle = new AdaptiveThrottle();
    expect(throttle.options).toEqual({ k: 2, window: 120_000, minThroughput: 10 });
    expect(Object.isFrozen(throttle.options)).toBe(true);
  });

  it('reports every violation in one RangeError', () => {
    expect(() => new AdaptiveThrottle({ k: 0.5, window: 0, minThroughput: -1 })).toThrow(
      'AdaptiveThrottle: k must be a finite number ≥ 1, got 0.5; window must be a finite number of ms > 0, got 0; ' +
        'minThroughput must be a finite number ≥ 0, got -1',
    );
  });
});

describe('AdaptiveThrottle — the formula', () => {
  it('is (requests − k·accepts) / (requests + 1), floored at 0', () => {
    const throttle = new AdaptiveThrottle({ minThroughput: 0 });
    for (let i = 0; i < 10; i++) throttle.record(0, i < 3); // 10 requests, 3 accepts
    expect(throttle.rejectionProbability(0)).toBeCloseTo((10 - 2 * 3) / 11, 15);
    for (let i = 0; i < 10; i++) throttle.record(0, true); // 20 requests, 13 accepts
    expect(throttle.rejectionProbability(0)).toBe(0);
    expect(throttle.requests(0)).toBe(20);
    expect(throttle.accepts(0)).toBe(13);
  });

  it('rejects nothing below minThroughput requests', () => {
    const throttle = new AdaptiveThrottle({ minThroughput: 10 });
    for (let i = 0; i < 9; i++) throttle.record(0, false);
    expect(throttle.rejectionProbability(0)).toBe(0);
    expect(throttle.shouldReject(0, 0)).toBe(false);
    throttle.record(0, false);
    expect(throttle.rejectionProbability(0)).toBeCloseTo(10 / 11, 15);
  });

  it('rejects when random01 < p, and counts the shed call as a request', () => {
    const throttle = new AdaptiveThrottle({ minThroughput: 0, k: 1 });
    for (let i = 0; i < 9; i++) throttle.record(0, false); // p = 9/10
    expect(throttle.shouldReject(0, 0.9)).toBe(false); // not below p: no change
    expect(throttle.requests(0)).toBe(9);
    expect(throttle.shouldReject(0, 0.89)).toBe(true);
    expect(throttle.requests(0)).toBe(10);
    expect(throttle.accepts(0)).toBe(0);
    expect(throttle.rejectionProbability(0)).toBeCloseTo(10 / 11, 15);
  });

  it('counts over a rolling window of ten buckets: a call leaves when its bucket is ten buckets old', () => {
    // window 1000 ms → buckets of 100 ms. (Until issue #30 the counts reset 1000 ms after the window opened, so all
    // ten calls vanished together at 1500; now each leaves with its own bucket.)
    const throttle = new AdaptiveThrottle({ window: 1000, minThroughput: 0 });
    throttle.record(500, false); // bucket 5
    for (let i = 0; i < 9; i++) throttle.record(1499, false); // bucket 14
    expect(throttle.requests(1499)).toBe(10);
    expect(throttle.rejectionProbability(1499)).toBeCloseTo(10 / 11, 15);
    expect(throttle.requests(1500)).toBe(9); // bucket 15: bucket 5 is ten buckets old
    expect(throttle.rejectionProbability(1500)).toBeCloseTo(9 / 10, 15);
    throttle.record(2000, true); // bucket 20
    expect(throttle.requests(2399)).toBe(10);
    expect(throttle.accepts(2399)).toBe(1);
    expect(throttle.requests(2400)).toBe(1); // bucket 24: bucket 14 is out
    expect(throttle.rejectionProbability(2400)).toBe(0);
    expect(throttle.accepts(2999)).toBe(1);
    expect(throttle.accepts(3000)).toBe(0);
    expect(throttle.requests(3000)).toBe(0);
  });

  it('keeps counting in the newest bucket when the clock steps back a little, and starts over when it steps back a window', () => {
    const throttle = new AdaptiveThrottle({ window: 1000, minThroughput: 0 });
    for (let i = 0; i < 5; i++) throttle.record(5000, false);
    throttle.record(4950, true); // slightly in the past: counted with the rest
    expect(throttle.requests(5000)).toBe(6);
    expect(throttle.accepts(5000)).toBe(1);
    throttle.record(3000, true); // a whole window back: the window starts over there
    expect(throttle.requests(3000)).toBe(1);
    expect(throttle.accepts(3000)).toBe(1);
  });

  it.each([Number.NaN, Infinity, -Infinity])(
    'rejects now = %p, which would stop the window from rolling',
    (now) => {
      // An Infinity bucket is never `window` ms in the past: the counts of a bad spell would stay for good.
      const throttle = new AdaptiveThrottle({ window: 1000, minThroughput: 0 });
      const message = `now must be a finite number of ms, got ${String(now)}`;
      expect(() => throttle.record(now, false)).toThrow(`AdaptiveThrottle.record: ${message}`);
      expect(() => throttle.shouldReject(now, 0)).toThrow(`AdaptiveThrottle.shouldReject: ${message}`);
      expect(() => throttle.rejectionProbability(now)).toThrow(
        `AdaptiveThrottle.rejectionProbability: ${message}`,
      );
      expect(() => throttle.requests(now)).toThrow(RangeError);
      expect(() => throttle.accepts(now)).toThrow(RangeError);
      for (let i = 0; i < 10; i++) throttle.record(0, false);
      expect(throttle.rejectionProbability(999)).toBeCloseTo(10 / 11, 15);
      expect(throttle.rejectionProbability(1000)).toBe(0);
    },
  );
});

describe('AdaptiveThrottle — self-limiting steady state', () => {
  /**
   * Every 10 ms the client wants 10 calls; the downstream can accept only 3 per tick (30 % of the offered load)
   * and rejects the rest. Without the throttle it would receive all 10. With it, the attempted rate converges to
   * about k × accepts = 6 per tick, and the accepted rate stays at the downstream's capacity.
   */
  it.each([2, 1.5, 3])('attempts converge near k × accepts (k = %p, downstream accepts 30 %)', (k) => {
    const random = seededRandom(42);
    const throttle = new AdaptiveThrottle({ k, window: 60_000 });
    let attempted = 0;
    let accepted = 0;
    for (let tick = 0; tick < 2000; tick++) {
      const now = tick * 10;
      let capacity = 3;
      for (let i = 0; i < 10; i++) {
        if (throttle.shouldReject(now, random())) continue;
        const ok = capacity > 0;
        if (ok) capacity--;
        throttle.record(now, ok);
        if (tick >= 1000) {
          attempted++;
          if (ok) accepted++;
        }
      }
    }
    // The downstream stays (nearly) saturated: the throttle sheds surplus, not useful work.
    expect(accepted).toBeGreaterThan(0.9 * 3 * 1000);
    const ratio = attempted / accepted;
    expect(ratio).toBeGreaterThan(k * 0.95);
    expect(ratio).toBeLessThan(k * 1.05);
  });

  it('sheds nothing from a healthy downstream', () => {
    const random = seededRandom(1);
    const throttle = new AdaptiveThrottle();
    let shed = 0;
    for (let i = 0; i < 10_000; i++) {
      if (throttle.shouldReject(i, random())) shed++;
      else throttle.record(i, true);
    }
    expect(shed).toBe(0);
  });
});

describe('AdaptiveThrottle — properties', () => {
  it('keeps the probability in [0, 1) and finite, and counts consistent, for any sequence', () => {
    fc.assert(
      fc.property(
        fc.record({
          k: fc.double({ min: 1, max: 10, noNaN: true }),
          window: fc.integer({ min: 1, max: 10_000 }),
          minThroughput: fc.integer({ min: 0, max: 20 }),
        }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 3000 }),
            accepted: fc.boolean(),
            random01: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          }),
          { maxLength: 300 },
        ),
        (options, calls) => {
          const throttle = new AdaptiveThrottle(options);
          let now = 0;
          for (const { gap, accepted, random01 } of calls) {
            now += gap;
            if (!throttle.shouldReject(now, random01)) throttle.record(now, accepted);
            const p = throttle.rejectionProbability(now);
            expect(Number.isFinite(p)).toBe(true);
            expect(p).toBeGreaterThanOrEqual(0);
            expect(p).toBeLessThan(1);
            expect(throttle.accepts(now)).toBeLessThanOrEqual(throttle.requests(now));
          }
        },
      ),
    );
  });

  it('is monotone: more accepts never raise the probability, more failures never lower it', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), fc.nat(50), (requests, acceptsRaw, extra) => {
        const accepts = Math.min(acceptsRaw, requests);
        const build = (r: number, a: number) => {
          const t = new AdaptiveThrottle({ minThroughput: 0 });
          for (let i = 0; i < r; i++) t.record(0, i < a);
          return t.rejectionProbability(0);
        };
        const base = build(requests, accepts);
        expect(build(requests + extra, accepts + extra)).toBeLessThanOrEqual(base + 1e-12);
        expect(build(requests + extra, accepts)).toBeGreaterThanOrEqual(base - 1e-12);
      }),
    );
  });
});

describe('AdaptiveThrottle — recovery after an outage (issue #30)', () => {
  /**
   * Every 100 ms the client wants 10 calls. Until `healAt` the downstream accepts at most `capacity` of them per
   * tick (an overloaded backend refusing the rest), then all. Returns the last instant, from `healAt` on, at which
   * the rejection probability was above 0 (or `healAt` when it never was), and the probability at `healAt`.
   */
  async function overloadThenHeal(capacity: number, seed: number, window: number) {
    const clock = new FakeClock();
    const random = seededRandom(seed);
    const throttle = new AdaptiveThrottle({ window });
    const healAt = 3 * window;
    let lastPositive = healAt;
    let atHeal = 0;
    while (clock.now() < healAt + 2 * window) {
      const now = clock.now();
      const p = throttle.rejectionProbability(now);
      if (now === healAt) atHeal = p;
      if (now >= healAt && p > 0) lastPositive = now;
      let left = now < healAt ? capacity : Infinity;
      for (let i = 0; i < 10; i++) {
        if (throttle.shouldReject(now, random())) continue;
        const ok = left > 0;
        if (ok) left--;
        throttle.record(now, ok);
      }
      await clock.advance(100);
    }
    return { healAt, lastPositive, atHeal };
  }

  it.each([
    [3, 1],
    [3, 2],
    [2, 1],
    [2, 7],
  ])(
    'overloaded to %p/10 of the offered load for three windows: p is back to 0 for good within one window (seed %p)',
    async (capacity, seed) => {
      const window = 60_000;
      const { healAt, lastPositive, atHeal } = await overloadThenHeal(capacity, seed, window);
      expect(atHeal).toBeGreaterThan(0.3); // it was shedding hard when the downstream healed
      expect(lastPositive - healAt).toBeLessThan(window);
    },
  );

  it('after a total outage, the outage itself leaves the window after one window; the calls shed since stay in it', async () => {
    // The book's formula counts a shed call as a request and never as an accept, so after an outage long enough to
    // push p near 1 the client sheds nearly every call after healing too, and those sheds keep p up: the made
    // calls grow only by about e² per window (README, "Recovery"). The rolling window bounds how long the outage's
    // own counts matter — exactly one window — not how long the shedding it caused lasts.
    const window = 60_000;
    const clock = new FakeClock();
    const random = seededRandom(3);
    const throttle = new AdaptiveThrottle({ window });
    const healAt = 2 * window;
    const afterHeal = { requests: 0, accepts: 0 };
    while (clock.now() < healAt + window) {
      const now = clock.now();
      const tracked = now > healAt + window / THROTTLE_BUCKETS; // calls a full bucket after healing
      for (let i = 0; i < 10; i++) {
        if (tracked) afterHeal.requests++;
        if (throttle.shouldReject(now, random())) continue;
        const ok = now >= healAt;
        if (tracked && ok) afterHeal.accepts++;
        throttle.record(now, ok);
      }
      await clock.advance(100);
    }
    const end = healAt + window;
    expect(throttle.requests(end)).toBeGreaterThanOrEqual(afterHeal.requests);
    expect(throttle.requests(end)).toBeLessThanOrEqual(
      afterHeal.requests + 10 * (window / THROTTLE_BUCKETS / 100),
    );
    expect(throttle.accepts(end)).toBeGreaterThanOrEqual(afterHeal.accepts);
    expect(throttle.requests(end)).toBeGreaterThan(2 * throttle.accepts(end)); // still shedding: documented
    expect(throttle.rejectionProbability(end)).toBeGreaterThan(0.5);
  });
});

describe('AdaptiveThrottle — the rolling window, as a property', () => {
  it('requests and accepts count exactly the calls within the window: never one `window` old, always one younger than window − window/10', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 100_000 }),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 40_000 }),
            accepted: fc.boolean(),
            random01: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
            probe: fc.integer({ min: 0, max: 200_000 }),
          }),
          { maxLength: 200 },
        ),
        (window, start, calls) => {
          const throttle = new AdaptiveThrottle({ window, k: 1.5, minThroughput: 0 });
          const seen: { t: number; accepted: boolean }[] = [];
          const bucket = (t: number) => Math.floor((t * THROTTLE_BUCKETS) / window);
          let now = start;
          for (const { gap, accepted, random01, probe } of calls) {
            now += gap;
            if (throttle.shouldReject(now, random01)) seen.push({ t: now, accepted: false });
            else {
              throttle.record(now, accepted);
              seen.push({ t: now, accepted });
            }
            // Look at the counts now and a little later (without counting anything there).
            for (const at of [now, now + (probe % (2 * window))]) {
              const inBuckets = seen.filter((c) => bucket(at) - bucket(c.t) < THROTTLE_BUCKETS);
              const requests = throttle.requests(at);
              expect(requests).toBe(inBuckets.length);
              expect(throttle.accepts(at)).toBe(inBuckets.filter((c) => c.accepted).length);
              expect(requests).toBeLessThanOrEqual(seen.filter((c) => at - c.t < window).length);
              expect(requests).toBeGreaterThanOrEqual(
                seen.filter((c) => at - c.t < window - window / THROTTLE_BUCKETS).length,
              );
            }
            // Later probes moved the window on; the calls still to come are later still, so the model stays exact.
            now = Math.max(now, now + (probe % (2 * window)));
          }
        },
      ),
    );
  });
});
