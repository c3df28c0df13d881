import { policyFromSpec } from '../policy/policy-spec';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { Resilience } from '../resilience';
import { InMemoryRateLimitStore } from '../stores/in-memory-rate-limit-store';
import { violationsOf } from '../validation/options-validator';
import { AdaptiveBulkheadStrategy } from './adaptive-bulkhead-strategy';
import { AdaptiveThrottleStrategy } from './adaptive-throttle-strategy';
import { BackoffStrategy } from './backoff-strategy';
import { BulkheadStrategy } from './bulkhead-strategy';
import { CircuitBreakerStrategy } from './circuit-breaker-strategy';
import { FallbackStrategy } from './fallback-strategy';
import { GradientBulkheadStrategy } from './gradient-bulkhead-strategy';
import { HedgeStrategy } from './hedge-strategy';
import { RateLimitStrategy } from './rate-limit-strategy';
import { RetryBudget } from './retry-budget';
import { RetryStrategy } from './retry-strategy';
import { TimeoutStrategy } from './timeout-strategy';

/** The violations a constructor call throws (none when it succeeds). */
function violations(build: () => unknown): readonly { path: string; constraint: string; value: unknown }[] {
  try {
    build();
    return [];
  } catch (error) {
    const found = violationsOf(error);
    if (found === undefined) throw error;
    return found;
  }
}

/** Options written in code are held to the same rule as a JSON spec: a key the strategy does not take is refused. */
describe('strategy constructors refuse options they do not take', () => {
  const breaker = { failureRatio: 0.5, samplingWindow: '10s', minThroughput: 5, breakDuration: '5s' };

  it('a misspelled option is named with the options the strategy takes, not silently defaulted', () => {
    const found = violations(() => new CircuitBreakerStrategy({ ...breaker, halfOpenMaxcalls: 5 } as never));
    expect(found).toEqual([
      {
        path: 'halfOpenMaxcalls',
        constraint:
          'a known circuitBreaker option (failureRatio, samplingWindow, minThroughput, breakDuration, halfOpenMaxCalls, maxBreakDuration, breakDurationMultiplier)',
        value: 5,
      },
    ]);
    expect(() => new CircuitBreakerStrategy({ ...breaker, halfOpenMaxcalls: 5 } as never)).toThrow(
      /^Invalid CircuitBreakerStrategy options: halfOpenMaxcalls must be a known circuitBreaker option \(.*\), got 5$/,
    );
  });

  it('every strategy and nested options object checks its keys, reporting them with its other violations', () => {
    const cases: [string, () => unknown, string][] = [
      ['rateLimit', () => new RateLimitStrategy({ permits: 1, per: '1s', burts: 2 } as never), 'burts'],
      [
        'bulkhead',
        () => new BulkheadStrategy({ maxConcurrency: 1, queueTimeout: 100 } as never),
        'queueTimeout',
      ],
      [
        'adaptiveBulkhead',
        () =>
          new AdaptiveBulkheadStrategy({ latencyThreshold: 10, maxConcurrency: 4, quantile: 0.9 } as never),
        'quantile',
      ],
      [
        'gradientBulkhead',
        () => new GradientBulkheadStrategy({ maxConcurrency: 4, queueSize: 4 } as never),
        'queueSize',
      ],
      ['adaptiveThrottle', () => new AdaptiveThrottleStrategy({ K: 2 } as never), 'K'],
      ['retry', () => new RetryStrategy({ maxAttempts: 2, retryIf: () => true } as never), 'retryIf'],
      ['timeout', () => new TimeoutStrategy({ timeout: 10, abortOnReturn: true } as never), 'abortOnReturn'],
      ['backoff', () => new BackoffStrategy({ base: 1, max: 10, factor: 3 } as never), 'factor'],
      [
        'budget',
        () => new RetryBudget({ ratio: 0.1, minRetriesPerSecond: 10 } as never),
        'minRetriesPerSecond',
      ],
      ['hedge', () => new HedgeStrategy({ delay: 10, maxAttempts: 2, quantile: 0.95 } as never), 'quantile'],
      ['fallback', () => new FallbackStrategy({ fallback: () => 1, when: ['internal'] } as never), 'when'],
    ];
    for (const [label, build, key] of cases) {
      const found = violations(build);
      expect(found).toEqual([
        {
          path: key,
          constraint: expect.stringMatching(new RegExp(`^a known ${label} option \\(`)),
          value: expect.anything(),
        },
      ]);
    }
    // With its other violations, in one error; nested options objects too, under their path.
    expect(
      violations(() => new TimeoutStrategy({ timeout: -1, timout: 5 } as never)).map((v) => v.path),
    ).toEqual(['timout', 'timeout']);
    expect(
      violations(
        () => new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 5, maxDelay: 9 } } as never),
      ).map((v) => v.path),
    ).toEqual(['backoff.maxDelay']);
    expect(
      violations(
        () => new HedgeStrategy({ delay: 1, maxAttempts: 2, budget: { ratio: 0.1, tokens: 3 } } as never),
      ).map((v) => v.path),
    ).toEqual(['budget.tokens']);
  });

  it('a JSON spec reports each unknown key once, with its path, in the same words', () => {
    const found = violations(() =>
      policyFromSpec({
        name: 'p',
        strategies: [
          { type: 'circuitBreaker', ...breaker, halfOpenMaxcalls: 5 },
          {
            type: 'retry',
            maxAttempts: 2,
            backoff: { base: 1, max: 5, maxDelay: 9 },
            budget: { ratio: 0.1, x: 1 },
          },
        ],
        hedge: { delay: 1, maxAttempts: 2, quantile: 0.9 },
      }),
    );
    expect(found.map((v) => v.path)).toEqual([
      'strategies[0].halfOpenMaxcalls',
      'strategies[1].backoff.maxDelay',
      'strategies[1].budget.x',
      'hedge.quantile',
    ]);
    expect(found[0]?.constraint).toMatch(/^a known circuitBreaker option \(/);
  });

  it('so do ResiliencePolicy and Resilience (and its stores), naming the options they take', () => {
    expect(violations(() => new ResiliencePolicy({ name: 'p', strategies: [], hedgee: 1 } as never))).toEqual(
      [
        {
          path: 'hedgee',
          constraint:
            'a known ResiliencePolicy option (name, strategies, fallback, hedge, failOpenOnStoreError, classifyResult, mode)',
          value: 1,
        },
      ],
    );
    expect(
      () => new Resilience({ polices: [], stores: { rateLimits: new InMemoryRateLimitStore() } } as never),
    ).toThrow(
      'Invalid Resilience options: polices must be a known Resilience option (policies, stores, clock, random, ' +
        'classify, maxKeysPerPolicy, ambientContext, replicaId), got []; ' +
        'stores.rateLimits must be a known store (circuitBreaker, rateLimit, latencyDigest, control), got an InMemoryRateLimitStore',
    );
    expect(() => new Resilience({ stores: { toString: 1 } } as never)).toThrow(
      /stores\.toString must be a known store/,
    );
    expect(() => new Resilience({ policies: [], maxKeysPerPolicy: 8, ambientContext: false })).not.toThrow();
  });

  it("a strategy's resolved options spread into a new one are accepted (a copy with one option changed)", () => {
    const strategies = [
      new RateLimitStrategy({ permits: 1, per: '1s' }),
      new BulkheadStrategy({ maxConcurrency: 2 }),
      new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 2, queueTarget: 5 }),
      new AdaptiveBulkheadStrategy({ latencyThreshold: 10, maxConcurrency: 4 }),
      new GradientBulkheadStrategy({ maxConcurrency: 4 }),
      new CircuitBreakerStrategy(breaker),
      new AdaptiveThrottleStrategy({}),
      new RetryStrategy({ maxAttempts: 2 }),
      new TimeoutStrategy({ timeout: 10 }),
      new HedgeStrategy({ delay: 10, maxAttempts: 2 }),
      new FallbackStrategy({ fallback: () => 1 }),
      new BackoffStrategy({ base: 1, max: 10 }),
      new RetryBudget({ ratio: 0.1 }),
    ];
    for (const s of strategies) {
      const Strategy = s.constructor as new (options: unknown) => { options: unknown };
      expect(new Strategy({ ...s.options }).options).toEqual(s.options);
    }
  });

  it('a policy spread into a new one is accepted: its own fields set from its strategies are ignored', () => {
    const base = new ResiliencePolicy({ name: 'base', strategies: [new CircuitBreakerStrategy(breaker)] });
    const copy = new ResiliencePolicy({ ...base, name: 'copy' });
    expect([copy.name, copy.circuitBreaker]).toEqual(['copy', base.circuitBreaker]);
    // Such a field naming a strategy the policy does not list is refused, not silently ignored.
    expect(
      violations(
        () =>
          new ResiliencePolicy({
            name: 'p',
            strategies: [],
            circuitBreaker: new CircuitBreakerStrategy(breaker),
          } as never),
      ).map((v) => [v.path, v.constraint]),
    ).toEqual([
      ['circuitBreaker', 'absent, or one of `strategies` (set from them; list the strategy there)'],
    ]);
  });

  it('options the strategy takes, and absent optional ones, are accepted as before', () => {
    expect(violations(() => new CircuitBreakerStrategy({ ...breaker, halfOpenMaxCalls: 2 }))).toEqual([]);
    expect(
      violations(
        () =>
          new BulkheadStrategy({
            maxConcurrency: 2,
            maxQueue: 4,
            queueTarget: 5,
            queueInterval: 100,
            queueAdaptiveLifo: true,
            prioritized: true,
          }),
      ),
    ).toEqual([]);
  });
});
