import { violationsOf } from '../validation/options-validator';
import { AdaptiveBulkheadStrategy } from '../strategies/adaptive-bulkhead-strategy';
import { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import { BulkheadStrategy } from '../strategies/bulkhead-strategy';
import { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { GradientBulkheadStrategy } from '../strategies/gradient-bulkhead-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import { RetryStrategy } from '../strategies/retry-strategy';
import { TimeoutStrategy } from '../strategies/timeout-strategy';
import { BUILTIN_POLICIES, OCC_POLICY, TRANSIENT_POLICY } from './builtin-policies';
import { ResiliencePolicy } from './resilience-policy';

function errorOf(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the constructor to throw');
}

const rateLimit = new RateLimitStrategy({ permits: 10, per: '1s' });
const bulkhead = new BulkheadStrategy({ maxConcurrency: 4 });
const breaker = new CircuitBreakerStrategy({
  failureRatio: 0.5,
  samplingWindow: '10s',
  minThroughput: 5,
  breakDuration: '5s',
});
const throttle = new AdaptiveThrottleStrategy();
const retry = new RetryStrategy({ maxAttempts: 3 });
const timeout = new TimeoutStrategy({ timeout: '1s' });

describe('ResiliencePolicy', () => {
  it('composes outer → inner regardless of the order given, and fills the slots', () => {
    const p = new ResiliencePolicy({
      name: 'orders',
      strategies: [timeout, retry, breaker, bulkhead, rateLimit],
    });
    expect(p.strategies).toEqual([rateLimit, bulkhead, breaker, retry, timeout]);
    expect(p).toMatchObject({ name: 'orders', rateLimit, bulkhead, circuitBreaker: breaker, retry, timeout });
    expect(p.adaptiveThrottle).toBeUndefined();
    expect(p.failOpenOnStoreError).toBe(true);
    expect(p.fallback).toBeUndefined();
    expect(p.hedge).toBeUndefined();
  });

  it('places the adaptive throttle where the breaker would be', () => {
    const p = new ResiliencePolicy({ name: 'p', strategies: [retry, throttle, rateLimit] });
    expect(p.strategies).toEqual([rateLimit, throttle, retry]);
    expect(p.adaptiveThrottle).toBe(throttle);
  });

  it('accepts an empty strategy list with a hedge and a fallback', () => {
    const hedge = new HedgeStrategy({ delay: 10, maxAttempts: 2 });
    const fallback = new FallbackStrategy({ fallback: () => 'x' });
    const p = new ResiliencePolicy({
      name: 'p',
      strategies: [],
      hedge,
      fallback,
      failOpenOnStoreError: false,
    });
    expect(p).toMatchObject({ hedge, fallback, failOpenOnStoreError: false, strategies: [] });
  });

  it('is frozen, strategies included', () => {
    const p = new ResiliencePolicy({ name: 'p', strategies: [retry] });
    expect(Object.isFrozen(p) && Object.isFrozen(p.strategies)).toBe(true);
  });

  it('does not keep a reference to the caller array', () => {
    const list: (RetryStrategy | TimeoutStrategy)[] = [retry];
    const p = new ResiliencePolicy({ name: 'p', strategies: list });
    list.push(timeout);
    expect(p.strategies).toEqual([retry]);
  });

  it('reports all violations together', () => {
    const error = errorOf(
      () =>
        new ResiliencePolicy({
          name: 'orders',
          strategies: [
            retry,
            new RetryStrategy({ maxAttempts: 2 }),
            bulkhead,
            new AdaptiveBulkheadStrategy({ latencyThreshold: 100, maxConcurrency: 5 }),
            new GradientBulkheadStrategy({ maxConcurrency: 5 }),
            breaker,
            throttle,
            { type: 'retry', options: {} } as never,
          ],
          fallback: (() => 1) as never,
          hedge: { delay: 1 } as never,
          failOpenOnStoreError: 'yes' as never,
        }),
    );
    expect(error).toMatchObject({ kind: 'configuration', code: 'invalid_policy', policy: 'orders' });
    expect(
      error.message.startsWith(
        "Invalid ResiliencePolicy 'orders': strategies[1] must be the only retry strategy",
      ),
    ).toBe(true);
    expect(violationsOf(error)?.map((v) => `${v.path}: ${v.constraint}`)).toEqual([
      'strategies[1]: the only retry strategy (strategies[0] is one already)',
      'strategies[3]: the only bulkhead: bulkhead, adaptiveBulkhead and gradientBulkhead are mutually exclusive (strategies[2] is a bulkhead)',
      'strategies[4]: the only bulkhead: bulkhead, adaptiveBulkhead and gradientBulkhead are mutually exclusive (strategies[2] is a bulkhead)',
      'strategies[6]: not combined with strategies[5]: circuitBreaker and adaptiveThrottle are mutually exclusive',
      'strategies[7]: a Ballast strategy instance (e.g. new RetryStrategy({...}))',
      'fallback: a FallbackStrategy',
      'hedge: a HedgeStrategy',
      'failOpenOnStoreError: a boolean',
    ]);
  });

  it('rejects a blank name and a non-array strategies', () => {
    const error = errorOf(() => new ResiliencePolicy({ name: '  ', strategies: 'retry' as never }));
    expect(error.message).toBe(
      "Invalid ResiliencePolicy: name must be a non-blank string, got '  '; strategies must be an array of strategies, got 'retry'",
    );
    expect(() => new ResiliencePolicy(undefined as never)).toThrow(/options must be an object/);
  });
});

describe('built-in policies', () => {
  it('transient retries infrastructure errors 3 times with decorrelated jitter and a 30 s timeout', () => {
    expect(TRANSIENT_POLICY.name).toBe('transient');
    expect(TRANSIENT_POLICY.retry?.options.maxAttempts).toBe(3);
    expect(TRANSIENT_POLICY.retry?.options.retryOn).toEqual(['infrastructure']);
    expect(TRANSIENT_POLICY.retry?.options.backoff.options).toEqual({
      base: 100,
      max: 5000,
      multiplier: 2,
      jitter: 'decorrelated',
    });
    expect(TRANSIENT_POLICY.timeout?.options.timeout).toBe(30_000);
  });

  it('occ retries concurrency errors quickly with full jitter', () => {
    expect(OCC_POLICY.name).toBe('occ');
    expect(OCC_POLICY.retry?.options).toMatchObject({ maxAttempts: 3, retryOn: ['concurrency'] });
    expect(OCC_POLICY.retry?.options.backoff.options).toEqual({
      base: 10,
      max: 1000,
      multiplier: 2,
      jitter: 'full',
    });
    expect(OCC_POLICY.timeout).toBeUndefined();
  });

  it('are listed and frozen', () => {
    expect(BUILTIN_POLICIES.map((p) => p.name)).toEqual(['transient', 'occ']);
    expect(Object.isFrozen(BUILTIN_POLICIES)).toBe(true);
  });
});
