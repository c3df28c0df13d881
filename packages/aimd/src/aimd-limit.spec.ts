import fc from 'fast-check';
import { AimdLimit, type AimdDecision } from './aimd-limit';

const threshold = (extra: Partial<ConstructorParameters<typeof AimdLimit>[0]> = {}) =>
  new AimdLimit({ maxConcurrency: 10, latencyThreshold: 100, ...extra });

describe('AimdLimit — threshold mode', () => {
  it('resolves the SPEC defaults and freezes them', () => {
    const aimd = threshold();
    expect(aimd.options).toEqual({
      maxConcurrency: 10,
      minConcurrency: 1,
      backoffRatio: 0.9,
      increaseStep: 1,
      cooldown: 1000,
      latencyThreshold: 100,
      latencyQuantile: undefined,
      window: 512,
    });
    expect(Object.isFrozen(aimd.options)).toBe(true);
    expect(aimd.limit).toBe(10);
    expect(aimd.latencyEstimate).toBeUndefined();
  });

  it('decreases multiplicatively on a breach and increases by step/limit otherwise', () => {
    const aimd = threshold();
    expect(aimd.onSample(150, 0)).toBe('decrease');
    expect(aimd.limit).toBe(9);
    expect(aimd.onSample(50, 10)).toBe('increase');
    expect(aimd.limit).toBeCloseTo(9 + 1 / 9, 12);
    expect(aimd.onSample(100, 20)).toBe('increase'); // equal to the threshold is not a breach
  });

  it('is capped at maxConcurrency and still answers increase there', () => {
    const aimd = threshold();
    expect(aimd.onSample(1, 0)).toBe('increase');
    expect(aimd.limit).toBe(10);
  });

  it('coalesces breaches inside the cooldown into one decrease', () => {
    const aimd = threshold({ cooldown: 1000 });
    const decisions: AimdDecision[] = [];
    for (let t = 0; t <= 2500; t += 250) decisions.push(aimd.onSample(500, t));
    // t = 0, 1000, 2000 decrease; the breaches in between hold.
    expect(decisions).toEqual([
      'decrease',
      'hold',
      'hold',
      'hold',
      'decrease',
      'hold',
      'hold',
      'hold',
      'decrease',
      'hold',
      'hold',
    ]);
    expect(aimd.limit).toBeCloseTo(10 * 0.9 ** 3, 12);
  });

  it('never treats the first breach as inside a cooldown (SPEC §11.5)', () => {
    const aimd = threshold({ cooldown: 60_000 });
    expect(aimd.onSample(101, 0)).toBe('decrease');
    expect(aimd.onSample(101, 59_999)).toBe('hold');
    expect(aimd.onSample(101, 60_000)).toBe('decrease');
  });

  it('keeps decreasing — and saying so — at the floor (SPEC §11.5)', () => {
    const aimd = threshold({ minConcurrency: 8, backoffRatio: 0.5, cooldown: 0 });
    expect(aimd.onSample(200, 0)).toBe('decrease');
    expect(aimd.limit).toBe(8);
    expect(aimd.onSample(200, 0)).toBe('decrease');
    expect(aimd.limit).toBe(8);
  });

  it('recovers by about increaseStep per limit-worth of good samples', () => {
    const aimd = threshold({ maxConcurrency: 100, increaseStep: 2 });
    aimd.onSample(1000, 0); // 90
    for (let i = 0; i < 90; i++) aimd.onSample(10, 1);
    expect(aimd.limit).toBeGreaterThan(91.9);
    expect(aimd.limit).toBeLessThan(92);
  });

  it('ignores non-finite latencies', () => {
    const aimd = threshold();
    expect(aimd.onSample(Number.NaN, 0)).toBe('hold');
    expect(aimd.onSample(Infinity, 0)).toBe('hold');
    expect(aimd.limit).toBe(10);
  });

  it.each([Number.NaN, Infinity, -Infinity])(
    'rejects now = %p, which would disable the cooldown or every decrease',
    (now) => {
      // A NaN decrease time made every later breach a decrease (the cooldown never held again); an Infinity one made
      // every later breach a hold (the limit never fell again).
      const aimd = threshold();
      expect(() => aimd.onSample(500, now)).toThrow(
        `AimdLimit.onSample: now must be a finite number of ms, got ${String(now)}`,
      );
      expect(aimd.limit).toBe(10);
      expect(aimd.onSample(500, 0)).toBe('decrease');
      expect(aimd.onSample(500, 1)).toBe('hold');
      expect(aimd.onSample(500, 1000)).toBe('decrease');
      expect(aimd.limit).toBeCloseTo(8.1, 12);
    },
  );
});

describe('AimdLimit — quantile mode', () => {
  const quantile = (extra: Partial<ConstructorParameters<typeof AimdLimit>[0]> = {}) =>
    threshold({ latencyQuantile: 0.5, window: 10, cooldown: 100, ...extra });

  it('holds while the windowed estimator warms up, adding the sample before reading it', () => {
    const aimd = quantile();
    for (let i = 0; i < 4; i++) expect(aimd.onSample(500, i)).toBe('hold');
    expect(aimd.latencyEstimate).toBeUndefined();
    // The fifth sample is added first, so this call already sees an estimate (the median 500).
    expect(aimd.onSample(500, 4)).toBe('decrease');
    expect(aimd.limit).toBe(9);
  });

  it('judges the quantile, not the single sample', () => {
    const aimd = quantile();
    for (const x of [10, 10, 10, 10, 10]) aimd.onSample(x, 0);
    expect(aimd.onSample(5000, 1)).toBe('increase'); // one outlier does not move the median
    expect(aimd.latencyEstimate).toBe(10);
  });

  it('opens a fresh epoch after each decrease, so the next decision sees only newer latency', () => {
    const aimd = quantile({ cooldown: 0 });
    for (let i = 0; i < 5; i++) aimd.onSample(500, i);
    expect(aimd.limit).toBe(9);
    expect(aimd.latencyEstimate).toBeUndefined();
    const decisions = [20, 20, 20, 20, 20].map((x, i) => aimd.onSample(x, 10 + i));
    expect(decisions).toEqual(['hold', 'hold', 'hold', 'hold', 'increase']);
    expect(aimd.latencyEstimate).toBe(20);
  });

  it('holds breaches inside the cooldown without resetting the epoch', () => {
    const aimd = quantile({ cooldown: 1000 });
    for (let i = 0; i < 5; i++) aimd.onSample(500, 0);
    for (let i = 0; i < 5; i++) aimd.onSample(500, 100); // warm again, breach, inside the cooldown
    expect(aimd.latencyEstimate).toBe(500);
    expect(aimd.onSample(500, 999)).toBe('hold');
    expect(aimd.onSample(500, 1000)).toBe('decrease');
    expect(aimd.limit).toBeCloseTo(8.1, 12);
  });
});

describe('AimdLimit — options', () => {
  it('reports every violation in one RangeError naming field, constraint and value', () => {
    expect(
      () =>
        new AimdLimit({
          maxConcurrency: 0,
          minConcurrency: 0,
          backoffRatio: 1.5,
          increaseStep: 0,
          cooldown: -1,
          latencyThreshold: 0,
          latencyQuantile: 1,
          window: 3,
        }),
    ).toThrow(
      'AimdLimit: maxConcurrency must be a finite number ≥ 1, got 0; ' +
        'minConcurrency must be a finite number in [1, maxConcurrency], got 0; backoffRatio must be in (0, 1), got 1.5; ' +
        'increaseStep must be a finite number > 0, got 0; cooldown must be a finite number of ms ≥ 0, got -1; ' +
        'latencyThreshold must be a finite number of ms > 0, got 0; latencyQuantile must be in (0, 1), got 1; ' +
        'window must be an integer ≥ 5, got 3',
    );
  });

  it('rejects a floor above the ceiling', () => {
    expect(() => threshold({ minConcurrency: 11 })).toThrow(
      'AimdLimit: minConcurrency must be a finite number in [1, maxConcurrency], got 11',
    );
  });

  it('treats an explicit undefined as the default', () => {
    expect(threshold({ cooldown: undefined }).options.cooldown).toBe(1000);
  });
});

describe('AimdLimit — properties', () => {
  const config = fc.record({
    maxConcurrency: fc.integer({ min: 1, max: 500 }),
    minFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    backoffRatio: fc.double({ min: 0.01, max: 0.99, noNaN: true }),
    increaseStep: fc.double({ min: 0.01, max: 10, noNaN: true }),
    cooldown: fc.integer({ min: 0, max: 2000 }),
    quantile: fc.option(fc.constantFrom(0.5, 0.9, 0.99), { nil: undefined }),
  });
  const samples = fc.array(
    fc.record({
      latency: fc.double({ min: 0, max: 1e6, noNaN: true }),
      gap: fc.integer({ min: 0, max: 500 }),
    }),
    { maxLength: 300 },
  );

  it('stays finite within [min, max], moves only in the direction it reports, and spaces decreases by the cooldown', () => {
    fc.assert(
      fc.property(config, samples, (c, xs) => {
        const min = Math.max(1, Math.floor(c.maxConcurrency * c.minFraction));
        const aimd = new AimdLimit({
          maxConcurrency: c.maxConcurrency,
          minConcurrency: min,
          backoffRatio: c.backoffRatio,
          increaseStep: c.increaseStep,
          cooldown: c.cooldown,
          latencyThreshold: 1000,
          latencyQuantile: c.quantile,
          window: 16,
        });
        let now = 0;
        let lastDecrease = -Infinity;
        for (const { latency, gap } of xs) {
          now += gap;
          const before = aimd.limit;
          const decision = aimd.onSample(latency, now);
          const after = aimd.limit;
          expect(Number.isFinite(after)).toBe(true);
          expect(after).toBeGreaterThanOrEqual(min);
          expect(after).toBeLessThanOrEqual(c.maxConcurrency);
          if (decision === 'increase') expect(after).toBeGreaterThanOrEqual(before);
          if (decision === 'hold') expect(after).toBe(before);
          if (decision === 'decrease') {
            expect(after).toBeLessThanOrEqual(before);
            expect(now - lastDecrease).toBeGreaterThanOrEqual(c.cooldown);
            lastDecrease = now;
          }
          if (c.quantile === undefined && latency <= 1000) expect(decision).toBe('increase');
        }
      }),
    );
  });
});
