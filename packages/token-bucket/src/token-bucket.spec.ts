import fc from 'fast-check';
import { TokenBucket } from './token-bucket';

describe('TokenBucket', () => {
  it('starts full, with burst defaulting to permits, and freezes its options', () => {
    const bucket = new TokenBucket({ permits: 10, per: 1000 });
    expect(bucket.options).toEqual({ permits: 10, per: 1000, burst: 10 });
    expect(Object.isFrozen(bucket.options)).toBe(true);
    expect(bucket.tokens(0)).toBe(10);
  });

  it('admits a full burst, then refuses until a token refills', () => {
    const bucket = new TokenBucket({ permits: 10, per: 1000 });
    for (let i = 0; i < 10; i++) expect(bucket.tryTake(0)).toBe(true);
    expect(bucket.tryTake(0)).toBe(false);
    expect(bucket.tokens(0)).toBe(0);
    expect(bucket.msUntil(0)).toBe(100);
    expect(bucket.msUntil(50)).toBe(50);
    expect(bucket.tryTake(99)).toBe(false);
    expect(bucket.tryTake(100)).toBe(true);
    expect(bucket.tryTake(100)).toBe(false);
  });

  it('refills continuously, fractionally, and never above burst', () => {
    const bucket = new TokenBucket({ permits: 4, per: 1000, burst: 8 });
    expect(bucket.tryTake(0, 8)).toBe(true);
    expect(bucket.tokens(125)).toBe(0.5);
    expect(bucket.tokens(1000)).toBe(4);
    expect(bucket.tokens(2000)).toBe(8);
    expect(bucket.tokens(1_000_000)).toBe(8);
  });

  it('takes n tokens at once or none', () => {
    const bucket = new TokenBucket({ permits: 5, per: 100 });
    expect(bucket.tryTake(0, 3)).toBe(true);
    expect(bucket.tryTake(0, 3)).toBe(false);
    expect(bucket.tokens(0)).toBe(2);
    expect(bucket.msUntil(0, 3)).toBe(20);
    expect(bucket.tryTake(20, 3)).toBe(true);
    expect(bucket.tryTake(20, 0)).toBe(true);
  });

  it('answers msUntil = 0 when tokens are there and Infinity when n exceeds the burst', () => {
    const bucket = new TokenBucket({ permits: 2, per: 1000 });
    expect(bucket.msUntil(0)).toBe(0);
    expect(bucket.msUntil(0, 3)).toBe(Infinity);
    expect(bucket.tryTake(0, 3)).toBe(false);
  });

  it('admits a take made exactly msUntil later, for rates that do not divide evenly', () => {
    for (const { permits, per, burst, start } of [
      { permits: 3, per: 1000, burst: 3, start: 0 },
      { permits: 3, per: 10, burst: 2, start: 0 },
      { permits: 7, per: 1000, burst: 7, start: 0 },
      // Large clock values (11 days of uptime, epoch milliseconds): the rounding grows with them.
      { permits: 100_000, per: 1000, burst: 10, start: 1e9 },
      { permits: 3, per: 1000, burst: 3, start: 1.7e12 + 0.123 },
    ]) {
      const bucket = new TokenBucket({ permits, per, burst });
      let now = start;
      for (let i = 0; i < burst; i++) expect(bucket.tryTake(now)).toBe(true);
      for (let round = 0; round < 12; round++) {
        expect(bucket.tryTake(now)).toBe(false);
        const wait = bucket.msUntil(now);
        expect(wait).toBeGreaterThan((per / permits) * 1e-6);
        now += wait;
        expect(bucket.tryTake(now)).toBe(true);
      }
    }
  });

  it('does not gain tokens when the clock steps back', () => {
    const bucket = new TokenBucket({ permits: 1, per: 1000 });
    expect(bucket.tryTake(5000)).toBe(true);
    expect(bucket.tokens(0)).toBe(0);
    expect(bucket.tryTake(100)).toBe(false);
    expect(bucket.msUntil(0)).toBe(1000);
    expect(bucket.tryTake(6000)).toBe(true);
  });

  it('regression (review): at epoch-ms clock values a fast bucket still stops at its burst', () => {
    // 1024 tokens per ms: one token is 2⁻¹⁰ ms, four ulps of a clock near 1.7e12 (ulp 2⁻¹²), so every take is exact.
    // The clock-scaled tolerance reached 1.5 tokens here, more than a take of one: every take was admitted.
    const bucket = new TokenBucket({ permits: 1024, per: 1 });
    const now = 1.7e12;
    let admitted = 0;
    for (let i = 0; i < 3 * 1024; i++) if (bucket.tryTake(now)) admitted++;
    expect(admitted).toBe(1024);
    expect(bucket.tokens(now)).toBe(0);
    expect(bucket.msUntil(now)).toBe(2 ** -10);
    expect(bucket.tryTake(now + 2 ** -10)).toBe(true);
    expect(bucket.tryTake(now + 2 ** -10)).toBe(false);
  });

  it.each([Number.NaN, Infinity, -Infinity])('rejects now = %p, which would poison the bucket', (now) => {
    const bucket = new TokenBucket({ permits: 1, per: 1000 });
    expect(() => bucket.tryTake(now)).toThrow(
      `TokenBucket.tryTake: now must be a finite number of ms, got ${String(now)}`,
    );
    expect(() => bucket.tokens(now)).toThrow(RangeError);
    expect(() => bucket.msUntil(now)).toThrow(RangeError);
    // Nothing was taken and the latest time seen is unchanged: the bucket still limits.
    expect(bucket.tryTake(0)).toBe(true);
    expect(bucket.tryTake(0)).toBe(false);
    expect(bucket.tryTake(999)).toBe(false);
    expect(bucket.tryTake(1000)).toBe(true);
  });

  it('never grants more than burst in one take, even where the rounding allowance is half a token', () => {
    // 1024 per ms at an epoch-ms clock: the allowance reaches its half-token cap, and burst + 0.25 looked within it.
    for (const now of [0, 1.7e12]) {
      const bucket = new TokenBucket({ permits: 1024, per: 1, burst: 4 });
      expect(bucket.msUntil(now, 4.25)).toBe(Infinity);
      expect(bucket.tryTake(now, 4.25)).toBe(false);
      expect(bucket.tryTake(now, 4)).toBe(true);
    }
  });

  it('rejects a negative or NaN n', () => {
    const bucket = new TokenBucket({ permits: 1, per: 1000 });
    expect(() => bucket.tryTake(0, -1)).toThrow('TokenBucket.tryTake: n must be ≥ 0, got -1');
    expect(() => bucket.msUntil(0, Number.NaN)).toThrow(RangeError);
  });

  it('reports every invalid option in one RangeError', () => {
    expect(() => new TokenBucket({ permits: 0, per: -5, burst: 0.5 })).toThrow(
      'TokenBucket: permits must be a finite number > 0, got 0; per must be a finite number of ms > 0, got -5; ' +
        'burst must be a finite number ≥ 1, got 0.5',
    );
    expect(() => new TokenBucket({ permits: Number.NaN, per: Infinity })).toThrow(
      'TokenBucket: permits must be a finite number > 0, got NaN; per must be a finite number of ms > 0, got Infinity; ' +
        'burst must be a finite number ≥ 1, got NaN',
    );
  });
});

describe('TokenBucket — properties', () => {
  const config = fc.record({
    permits: fc.integer({ min: 1, max: 1000 }),
    per: fc.integer({ min: 1, max: 60_000 }),
    extraBurst: fc.integer({ min: 0, max: 100 }),
  });
  /** Operations at non-decreasing times: gaps in ms, token counts up to 5. */
  const operations = fc.array(
    fc.record({ gap: fc.double({ min: 0, max: 5000, noNaN: true }), n: fc.integer({ min: 0, max: 5 }) }),
    { maxLength: 200 },
  );

  it('never holds more than burst nor fewer than zero tokens, and never returns NaN', () => {
    fc.assert(
      fc.property(config, operations, ({ permits, per, extraBurst }, ops) => {
        const bucket = new TokenBucket({ permits, per, burst: permits + extraBurst });
        let now = 0;
        for (const { gap, n } of ops) {
          now += gap;
          bucket.tryTake(now, n);
          const tokens = bucket.tokens(now);
          expect(tokens).toBeGreaterThanOrEqual(0);
          expect(tokens).toBeLessThanOrEqual(permits + extraBurst);
          const wait = bucket.msUntil(now, Math.min(n, permits + extraBurst));
          expect(Number.isFinite(wait) && wait >= 0).toBe(true);
        }
      }),
    );
  });

  it('admits at most burst + rate·interval tokens over any interval', () => {
    fc.assert(
      fc.property(config, operations, ({ permits, per, extraBurst }, ops) => {
        const burst = permits + extraBurst;
        const bucket = new TokenBucket({ permits, per, burst });
        const admitted: Array<{ at: number; n: number }> = [];
        let now = 0;
        for (const { gap, n } of ops) {
          now += gap;
          if (bucket.tryTake(now, n)) admitted.push({ at: now, n });
        }
        for (let i = 0; i < admitted.length; i++) {
          let taken = 0;
          for (let j = i; j < admitted.length; j++) {
            taken += admitted[j]!.n;
            const interval = admitted[j]!.at - admitted[i]!.at;
            expect(taken).toBeLessThanOrEqual(burst + (permits / per) * interval + 1e-9);
          }
        }
      }),
    );
  });

  it('admits at most burst + rate·interval (+ half a token of tolerance) at any clock value, at any rate', () => {
    // Power-of-two token periods keep every take exact on clocks up to 2⁴², so only the tolerance is under test.
    const fast = fc.record({
      log2MsPerToken: fc.integer({ min: -10, max: 0 }),
      permits: fc.integer({ min: 1, max: 8 }),
      extraBurst: fc.integer({ min: 0, max: 4 }),
      start: fc.constantFrom(0, 1e9, 1.7e12, 2 ** 42 - 2 ** 20),
    });
    /** Gaps in quarters of a token's period, often none (bursts at one instant). */
    const steps = fc.array(
      fc.record({
        quarters: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 8 })),
        n: fc.integer({ min: 0, max: 3 }),
      }),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(fast, steps, ({ log2MsPerToken, permits, extraBurst, start }, ops) => {
        const msPerToken = 2 ** log2MsPerToken;
        const burst = permits + extraBurst;
        const bucket = new TokenBucket({ permits, per: permits * msPerToken, burst });
        const admitted: Array<{ at: number; n: number }> = [];
        let now = start;
        for (const { quarters, n } of ops) {
          now += (quarters / 4) * msPerToken;
          if (bucket.tryTake(now, n)) admitted.push({ at: now, n });
        }
        for (let i = 0; i < admitted.length; i++) {
          let taken = 0;
          for (let j = i; j < admitted.length; j++) {
            taken += admitted[j]!.n;
            const interval = admitted[j]!.at - admitted[i]!.at;
            expect(taken).toBeLessThanOrEqual(burst + interval / msPerToken + 0.5);
          }
        }
      }),
    );
  });

  it('admits n tokens exactly msUntil(now, n) later, not a millionth of a token sooner', () => {
    fc.assert(
      fc.property(
        config,
        operations,
        fc.integer({ min: 1, max: 5 }),
        ({ permits, per, extraBurst }, ops, n) => {
          const burst = permits + extraBurst;
          fc.pre(n <= burst);
          const bucket = new TokenBucket({ permits, per, burst });
          let now = 0;
          for (const op of ops) {
            now += op.gap;
            bucket.tryTake(now, op.n);
          }
          const wait = bucket.msUntil(now, n);
          // A millionth of a token early is refused; exactly on time is admitted (no float shortfall).
          const early = (per / permits) * 1e-6;
          if (wait > early) expect(bucket.tryTake(now + wait - early, n)).toBe(false);
          expect(bucket.tryTake(now + wait, n)).toBe(true);
        },
      ),
    );
  });
});
