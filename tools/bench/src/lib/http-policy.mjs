import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
} from '@ballast/core';

/**
 * Issue 7's policy for the HTTP bench and the route probe: rate limit (high enough never to reject) +
 * circuit breaker + retry(3) + timeout(1 s), in-memory stores.
 */
export const httpBenchPolicy = new ResiliencePolicy({
  name: 'bench',
  strategies: [
    new RateLimitStrategy({ permits: 1_000_000_000, per: '1s' }),
    new CircuitBreakerStrategy({
      failureRatio: 0.5,
      samplingWindow: '10s',
      minThroughput: 20,
      breakDuration: '5s',
    }),
    new RetryStrategy({ maxAttempts: 3, backoff: { base: '10ms', max: '100ms' } }),
    new TimeoutStrategy({ timeout: '1s' }),
  ],
});
