import { AdaptiveBulkheadStrategy } from './adaptive-bulkhead-strategy';
import { AdaptiveThrottleStrategy } from './adaptive-throttle-strategy';
import { BulkheadStrategy } from './bulkhead-strategy';
import { ChaosStrategy } from './chaos-strategy';
import { CircuitBreakerStrategy } from './circuit-breaker-strategy';
import { GradientBulkheadStrategy } from './gradient-bulkhead-strategy';
import { RateLimitStrategy } from './rate-limit-strategy';
import { RetryStrategy } from './retry-strategy';
import { TimeoutStrategy } from './timeout-strategy';

/** Any of the three bulkhead kinds (mutually exclusive within a policy). */
export type AnyBulkheadStrategy = BulkheadStrategy | AdaptiveBulkheadStrategy | GradientBulkheadStrategy;

/** A strategy that may appear in `ResiliencePolicy.strategies` (hedge and fallback have their own slots). */
export type Strategy =
  | RateLimitStrategy
  | AnyBulkheadStrategy
  | CircuitBreakerStrategy
  | AdaptiveThrottleStrategy
  | RetryStrategy
  | TimeoutStrategy
  | ChaosStrategy;

const STRATEGY_CLASSES = [
  RateLimitStrategy,
  BulkheadStrategy,
  AdaptiveBulkheadStrategy,
  GradientBulkheadStrategy,
  CircuitBreakerStrategy,
  AdaptiveThrottleStrategy,
  RetryStrategy,
  TimeoutStrategy,
  ChaosStrategy,
] as const;

/** True for an instance of one of the pipeline strategy classes. */
export function isStrategy(value: unknown): value is Strategy {
  return STRATEGY_CLASSES.some((cls) => value instanceof cls);
}
