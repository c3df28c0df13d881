import { violationsOf } from '../validation/options-validator';
import { AdaptiveThrottleStrategy } from './adaptive-throttle-strategy';
import { CircuitBreakerStrategy } from './circuit-breaker-strategy';
import { FallbackStrategy } from './fallback-strategy';
import { HedgeStrategy } from './hedge-strategy';
import { RateLimitStrategy } from './rate-limit-strategy';
import { RetryBudget } from './retry-budget';
import { TimeoutStrategy } from './timeout-strategy';

/** The error `build` throws (fails the test when it does not throw). */
function errorOf(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the constructor to throw');
}
const pathsOf = (build: () => unknown) => violationsOf(errorOf(build))?.map((v) => v.path);

describe('RateLimitStrategy', () => {
  it('resolves durations and defaults burst to permits', () => {
    const s = new RateLimitStrategy({ permits: 10, per: '1s' });
    expect(s.type).toBe('rateLimit');
    expect(s.options).toEqual({ permits: 10, per: 1000, burst: 10 });
    expect(new RateLimitStrategy({ permits: 10, per: 500, burst: 20 }).options.burst).toBe(20);
  });

  it('is frozen, options included', () => {
    const s = new RateLimitStrategy({ permits: 1, per: 1 });
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.options)).toBe(true);
  });

  it('reports every violation', () => {
    const error = errorOf(() => new RateLimitStrategy({ permits: 0, per: '-1s', burst: 0.5 }));
    expect(error.message).toBe(
      "Invalid RateLimitStrategy options: permits must be ≥ 1, got 0; per must be a duration > 0, got '-1s'; burst must be ≥ 1, got 0.5",
    );
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy' });
  });

  it('rejects a non-object', () => {
    expect(pathsOf(() => new RateLimitStrategy(null as never))).toContain('options');
  });
});

describe('CircuitBreakerStrategy', () => {
  it('resolves and defaults halfOpenMaxCalls to 1', () => {
    const s = new CircuitBreakerStrategy({
      failureRatio: 0.5,
      samplingWindow: '10s',
      minThroughput: 5,
      breakDuration: '30s',
    });
    expect(s.type).toBe('circuitBreaker');
    expect(s.options).toEqual({
      failureRatio: 0.5,
      samplingWindow: 10_000,
      minThroughput: 5,
      breakDuration: 30_000,
      halfOpenMaxCalls: 1,
      maxBreakDuration: undefined,
      breakDurationMultiplier: 2,
    });
  });

  it('produces the SPEC message', () => {
    const error = errorOf(
      () =>
        new CircuitBreakerStrategy({
          failureRatio: 1.5,
          samplingWindow: '-1s',
          minThroughput: 1,
          breakDuration: 1,
        }),
    );
    expect(error.message).toBe(
      "Invalid CircuitBreakerStrategy options: failureRatio must be in (0, 1], got 1.5; samplingWindow must be a duration > 0, got '-1s'",
    );
  });

  it.each([
    [{ failureRatio: 0 }, 'failureRatio'],
    [{ failureRatio: 1.01 }, 'failureRatio'],
    [{ samplingWindow: 0 }, 'samplingWindow'],
    [{ minThroughput: 0 }, 'minThroughput'],
    [{ minThroughput: 1.5 }, 'minThroughput'],
    [{ breakDuration: 'soon' }, 'breakDuration'],
    [{ halfOpenMaxCalls: 0 }, 'halfOpenMaxCalls'],
  ])('rejects %p', (patch, path) => {
    const base = { failureRatio: 0.5, samplingWindow: 1000, minThroughput: 1, breakDuration: 1000 };
    expect(pathsOf(() => new CircuitBreakerStrategy({ ...base, ...patch } as never))).toEqual([path]);
  });
});

describe('AdaptiveThrottleStrategy', () => {
  it('defaults k = 2, window = 2m, minThroughput = 10', () => {
    const s = new AdaptiveThrottleStrategy();
    expect(s.type).toBe('adaptiveThrottle');
    expect(s.options).toEqual({ k: 2, window: 120_000, minThroughput: 10 });
    expect(new AdaptiveThrottleStrategy({ k: 1.5, window: '30s', minThroughput: 0 }).options).toEqual({
      k: 1.5,
      window: 30_000,
      minThroughput: 0,
    });
  });

  it('rejects k < 1, window ≤ 0 and a negative minThroughput', () => {
    expect(pathsOf(() => new AdaptiveThrottleStrategy({ k: 0.5, window: 0, minThroughput: -1 }))).toEqual([
      'k',
      'window',
      'minThroughput',
    ]);
  });
});

describe('TimeoutStrategy', () => {
  it('resolves the timeout and rejects 0', () => {
    const s = new TimeoutStrategy({ timeout: '1.5s' });
    expect(s.type).toBe('timeout');
    expect(s.options).toEqual({ timeout: 1500 });
    expect(errorOf(() => new TimeoutStrategy({ timeout: 0 })).message).toBe(
      'Invalid TimeoutStrategy options: timeout must be a duration > 0, got 0',
    );
  });
});

describe('HedgeStrategy', () => {
  it('resolves a fixed delay', () => {
    const s = new HedgeStrategy({ delay: '50ms', maxAttempts: 2 });
    expect(s.type).toBe('hedge');
    expect(s.options).toEqual({
      delay: 50,
      maxAttempts: 2,
      adaptiveDelayQuantile: undefined,
      delayMin: undefined,
      delayMax: undefined,
      budget: undefined,
    });
    expect(Object.isFrozen(s) && Object.isFrozen(s.options)).toBe(true);
  });

  it('resolves an adaptive delay and a budget given as options or an instance', () => {
    const s = new HedgeStrategy({
      delay: 0,
      maxAttempts: 3,
      adaptiveDelayQuantile: 0.95,
      delayMin: '5ms',
      delayMax: '1s',
      budget: { ratio: 0.1 },
    });
    expect(s.options).toMatchObject({ delay: 0, adaptiveDelayQuantile: 0.95, delayMin: 5, delayMax: 1000 });
    expect(s.options.budget?.options).toEqual({ ratio: 0.1, minThroughput: 0 });
    const budget = new RetryBudget({ ratio: 0.2 });
    expect(new HedgeStrategy({ delay: 1, maxAttempts: 2, budget }).options.budget).toBe(budget);
  });

  it('needs the quantile for delayMin/delayMax, delayMin ≤ delayMax, maxAttempts ≥ 2', () => {
    expect(
      pathsOf(() => new HedgeStrategy({ delay: -1, maxAttempts: 1, delayMin: 10, delayMax: 5 })),
    ).toEqual(['delayMin', 'delayMax', 'delayMax', 'delay', 'maxAttempts']);
    expect(pathsOf(() => new HedgeStrategy({ delay: 1, maxAttempts: 2, adaptiveDelayQuantile: 1 }))).toEqual([
      'adaptiveDelayQuantile',
    ]);
    expect(pathsOf(() => new HedgeStrategy({ delay: 1, maxAttempts: 2, budget: { ratio: 0 } }))).toEqual([
      'budget.ratio',
    ]);
    expect(pathsOf(() => new HedgeStrategy({ delay: 1, maxAttempts: 2, budget: 3 as never }))).toEqual([
      'budget',
    ]);
  });
});

describe('FallbackStrategy', () => {
  it('handles every kind by default', () => {
    const s = new FallbackStrategy({ fallback: () => 'cached' });
    expect(s.type).toBe('fallback');
    expect(s.options.on).toBeUndefined();
    expect(s.handles('internal') && s.handles('throttled')).toBe(true);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('handles only the listed kinds', () => {
    const s = new FallbackStrategy<number>({ fallback: async () => 0, on: ['infrastructure', 'timeout'] });
    expect(s.handles('timeout')).toBe(true);
    expect(s.handles('domain')).toBe(false);
    expect(Object.isFrozen(s.options.on)).toBe(true);
  });

  it('rejects a non-function and unknown kinds', () => {
    expect(
      pathsOf(() => new FallbackStrategy({ fallback: 1 as never, on: ['infrastructure', 'nope' as never] })),
    ).toEqual(['fallback', 'on[1]']);
    expect(pathsOf(() => new FallbackStrategy({ fallback: () => 1, on: [] }))).toEqual(['on']);
  });
});
