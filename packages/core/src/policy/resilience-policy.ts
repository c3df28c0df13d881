import { FallbackStrategy } from '../strategies/fallback-strategy';
import type { HedgeStrategy } from '../strategies/hedge-strategy';
import type { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import type { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import type { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import type { RetryStrategy } from '../strategies/retry-strategy';
import type { AnyBulkheadStrategy, Strategy } from '../strategies/strategy';
import type { TimeoutStrategy } from '../strategies/timeout-strategy';
import { OptionsValidator } from '../validation/options-validator';
import { checkPolicyParts } from './policy-rules';

export interface ResiliencePolicyOptions {
  /** Unique within a `Resilience`; a policy named like a built-in (`transient`, `occ`) replaces it. */
  name: string;
  /** Any order; composed outer → inner as rate limit → bulkhead → breaker | throttle → retry → timeout. */
  strategies: readonly Strategy[];
  /** Wraps everything, hedge included. */
  fallback?: FallbackStrategy<unknown> | undefined;
  /** Wraps the whole strategy pipeline; each hedged attempt passes through it. */
  hedge?: HedgeStrategy | undefined;
  /** When a store throws: admit the call on local state (true, default) or reject with `resilience_store_unavailable`. */
  failOpenOnStoreError?: boolean;
}

/** The options `new ResiliencePolicy` takes; any other key is a violation. @internal */
export const POLICY_OPTION_KEYS: readonly string[] = [
  'name',
  'strategies',
  'fallback',
  'hedge',
  'failOpenOnStoreError',
];

/** The fields a policy sets from its strategies, which a spread policy (`{ ...policy }`) carries along. */
const DERIVED_KEYS: readonly string[] = [
  'rateLimit',
  'bulkhead',
  'circuitBreaker',
  'adaptiveThrottle',
  'retry',
  'timeout',
];

/**
 * A named, validated, frozen composition of strategies (SPEC §4). Every violation — a bad name, a foreign object in
 * `strategies`, two strategies of one kind, two bulkheads, breaker with adaptive throttle — is reported together
 * in one `configuration` / `invalid_policy` error.
 */
export class ResiliencePolicy {
  readonly name: string;
  /** Canonical order, outer → inner, regardless of the order given. */
  readonly strategies: readonly Strategy[];
  readonly fallback: FallbackStrategy<unknown> | undefined;
  readonly hedge: HedgeStrategy | undefined;
  readonly failOpenOnStoreError: boolean;
  readonly rateLimit: RateLimitStrategy | undefined;
  readonly bulkhead: AnyBulkheadStrategy | undefined;
  readonly circuitBreaker: CircuitBreakerStrategy | undefined;
  readonly adaptiveThrottle: AdaptiveThrottleStrategy | undefined;
  readonly retry: RetryStrategy | undefined;
  readonly timeout: TimeoutStrategy | undefined;

  constructor(options: ResiliencePolicyOptions) {
    const name: unknown = (options as Partial<ResiliencePolicyOptions> | undefined)?.name;
    const validName = typeof name === 'string' && name.trim() !== '';
    const v = new OptionsValidator('ResiliencePolicy', {
      heading: validName ? `Invalid ResiliencePolicy '${name}'` : 'Invalid ResiliencePolicy',
      ...(validName ? { policy: name } : {}),
    });
    const o = v.options(options, POLICY_OPTION_KEYS, 'ResiliencePolicy', DERIVED_KEYS);
    const strategies = checkPolicyParts(v, {
      name: o['name'],
      strategies: o['strategies'],
      fallback: o['fallback'],
      hedge: o['hedge'],
      failOpenOnStoreError: o['failOpenOnStoreError'],
    });
    // `{ ...policy, name: 'copy' }` carries the fields a policy sets from its strategies: accepted when they are
    // among the strategies (or absent), refused otherwise (they would do nothing).
    for (const key of DERIVED_KEYS) {
      const value = o[key];
      if (value !== undefined && !(Array.isArray(strategies) && strategies.includes(value as never)))
        v.fail(key, 'absent, or one of `strategies` (set from them; list the strategy there)', value);
    }
    v.throwIfInvalid();
    this.name = name as string;
    this.strategies = Object.freeze(strategies);
    this.fallback = o['fallback'] as FallbackStrategy<unknown> | undefined;
    this.hedge = o['hedge'] as HedgeStrategy | undefined;
    this.failOpenOnStoreError = (o['failOpenOnStoreError'] as boolean | undefined) ?? true;
    let rateLimit: RateLimitStrategy | undefined;
    let bulkhead: AnyBulkheadStrategy | undefined;
    let circuitBreaker: CircuitBreakerStrategy | undefined;
    let adaptiveThrottle: AdaptiveThrottleStrategy | undefined;
    let retry: RetryStrategy | undefined;
    let timeout: TimeoutStrategy | undefined;
    for (const s of strategies) {
      switch (s.type) {
        case 'rateLimit':
          rateLimit = s;
          break;
        case 'bulkhead':
        case 'adaptiveBulkhead':
        case 'gradientBulkhead':
          bulkhead = s;
          break;
        case 'circuitBreaker':
          circuitBreaker = s;
          break;
        case 'adaptiveThrottle':
          adaptiveThrottle = s;
          break;
        case 'retry':
          retry = s;
          break;
        case 'timeout':
          timeout = s;
          break;
      }
    }
    this.rateLimit = rateLimit;
    this.bulkhead = bulkhead;
    this.circuitBreaker = circuitBreaker;
    this.adaptiveThrottle = adaptiveThrottle;
    this.retry = retry;
    this.timeout = timeout;
    Object.freeze(this);
  }
}
