import fc from 'fast-check';
import { TokenBucket } from './token-bucket';

/**
 * Rounding at large clock values. An absolute "full again at" instant has the clock's magnitude: at epoch
 * milliseconds (ulp 2⁻¹² ms) each take's period was rounded to whole ulps, so fast buckets admitted more (or fewer)
 * than their rate, and one whose token period was under half an ulp admitted every take.
 */
describe('TokenBucket — epoch-ms clocks and fast rates', () => {
  it.each([300, 1000, 3000, 10_000])(
    'regression (review): at 1.7e12 ms and %p tokens/ms offered at 3× the rate, admits the rate (±1 token)',
    (perMs) => {
      const burst = 10;
      const bucket = new TokenBucket({ permits: perMs * 1000, per: 1000, burst });
      const start = 1.7e12;
      const step = 1 / perMs / 3;
      let admitted = 0;
      let now = start;
      for (let i = 0; i < 60_000; i++) {
        now = start + i * step;
        if (bucket.tryTake(now)) admitted++;
      }
      const allowed = burst + (now - start) * perMs;
      expect(admitted).toBeLessThanOrEqual(allowed + 0.5);
      expect(admitted).toBeGreaterThanOrEqual(allowed - 1);
    },
  );

  it('property: admits at most burst + rate·interval (+ half a token) for any rate, at any clock value', () => {
    const config = fc.record({
      perMs: fc.double({ min: 1, max: 20_000, noNaN: true }),
      burst: fc.integer({ min: 1, max: 20 }),
      start: fc.constantFrom(0, 1e9, 1.7e12, 4.1e12),
    });
    /** Gaps in tenths of a token's period (often none), takes of 0…3 tokens. */
    const steps = fc.array(
      fc.record({
        tenths: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 })),
        n: fc.integer({ min: 0, max: 3 }),
      }),
      { minLength: 1, maxLength: 300 },
    );
    fc.assert(
      fc.property(config, steps, ({ perMs, burst, start }, ops) => {
        const msPerToken = 1 / perMs;
        const bucket = new TokenBucket({ permits: perMs * 1000, per: 1000, burst });
        const admitted: Array<{ at: number; n: number }> = [];
        let elapsed = 0;
        for (const { tenths, n } of ops) {
          elapsed += (tenths / 10) * msPerToken;
          const now = start + elapsed;
          if (bucket.tryTake(now, n)) admitted.push({ at: now, n });
          const tokens = bucket.tokens(now);
          expect(tokens >= 0 && tokens <= burst).toBe(true);
        }
        const rate = (perMs * 1000) / 1000; // the bucket's own permits / per
        for (let i = 0; i < admitted.length; i++) {
          let taken = 0;
          for (let j = i; j < admitted.length; j++) {
            taken += admitted[j]!.n;
            const interval = admitted[j]!.at - admitted[i]!.at;
            expect(taken).toBeLessThanOrEqual(burst + rate * interval + 0.5 + 1e-9 * taken);
          }
        }
      }),
      { seed: 20240611, numRuns: 300 },
    );
  });
});

describe('TokenBucket — a token period that overflows', () => {
  it('regression (review): is a configuration error, not a bucket that a take of 0 refills', () => {
    const options = { permits: 1e-300, per: 1e10, burst: 1 };
    expect(() => new TokenBucket(options)).toThrow(
      'TokenBucket: per / permits must be a finite number of ms per token, got Infinity',
    );
  });

  it('regression (review): a full-again instant past the largest double leaves the bucket empty, not refilled', () => {
    const bucket = new TokenBucket({ permits: 1, per: 1e308, burst: 2 });
    const admitted = Array.from({ length: 6 }, () => bucket.tryTake(0));
    expect(admitted).toEqual([true, true, false, false, false, false]);
    expect(bucket.tokens(0)).toBe(0);
    expect(bucket.msUntil(0)).toBe(Infinity);
  });
});

describe('TokenBucket — a caller honouring every msUntil', () => {
  it('property: is admitted after each wait, round after round, at any clock value and rate', () => {
    const config = fc.record({
      permits: fc.double({ min: 0.5, max: 5_000, noNaN: true }),
      per: fc.constantFrom(1, 3, 10, 1000, 60_000),
      burst: fc.integer({ min: 1, max: 8 }),
      n: fc.integer({ min: 1, max: 8 }),
      start: fc.constantFrom(0, 0.1, 1e9 + 0.3, 1.7e12, 1.7e12 + 0.123),
    });
    fc.assert(
      fc.property(config, ({ permits, per, burst, n: want, start }) => {
        const n = Math.min(want, burst);
        const bucket = new TokenBucket({ permits, per, burst });
        let now = start;
        while (bucket.tryTake(now, n));
        for (let round = 0; round < 400; round++) {
          const wait = bucket.msUntil(now, n);
          expect(wait).toBeGreaterThan(0);
          now += wait;
          if (!bucket.tryTake(now, n)) throw new Error(`refused in round ${round} after waiting ${wait} ms`);
        }
      }),
      { seed: 4242, numRuns: 120 },
    );
  });
});
