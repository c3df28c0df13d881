import fc from 'fast-check';
import { seededRandom } from '@ballast/testing';
import { AdaptiveThrottle } from './adaptive-throttle';

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

  it('resets its counts once the window has elapsed', () => {
    const throttle = new AdaptiveThrottle({ window: 1000, minThroughput: 0 });
    throttle.record(500, false); // the window opens at the first call: 500
    for (let i = 0; i < 9; i++) throttle.record(1499, false);
    expect(throttle.requests(1499)).toBe(10);
    expect(throttle.rejectionProbability(1499)).toBeCloseTo(10 / 11, 15);
    expect(throttle.rejectionProbability(1500)).toBe(0); // 1000 ms after 500: fresh window
    expect(throttle.requests(1500)).toBe(0);
    throttle.record(2000, true);
    expect(throttle.accepts(2499)).toBe(1);
    expect(throttle.accepts(2500)).toBe(0);
  });

  it.each([Number.NaN, Infinity, -Infinity])(
    'rejects now = %p, which would stop the window from resetting',
    (now) => {
      // An Infinity window start was never `window` ms in the past again: the counts of a bad spell stayed for good.
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
