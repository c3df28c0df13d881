import { FallbackStrategy } from '../strategies/fallback-strategy';
import type { HedgeStrategy } from '../strategies/hedge-strategy';
import type { AdaptiveThrottleStrategy } from '../strategies/adaptive-throttle-strategy';
import type { ChaosStrategy } from '../strategies/chaos-strategy';
import type { CircuitBreakerStrategy } from '../strategies/circuit-breaker-strategy';
import type { RateLimitStrategy } from '../strategies/rate-limit-strategy';
import type { RetryStrategy } from '../strategies/retry-strategy';
import type { AnyBulkheadStrategy, Strategy } from '../strategies/strategy';
import type { TimeoutStrategy } from '../strategies/timeout-strategy';
import { OptionsValidator } from '../validation/options-validator';
import {
  namedResultClassifier,
  resultClassifierNames,
  type ResultClassifier,
} from '../errors/classify-result';
import { checkPolicyParts } from './policy-rules';
import { POLICY_MODES, type PolicyMode } from './policy-mode';

export interface ResiliencePolicyOptions {
  /** Unique within a `Resilience`; a policy named like a built-in (`transient`, `occ`) replaces it. */
  name: string;
  /** Any order; composed outer → inner as rate limit → bulkhead → breaker | throttle → retry → timeout → chaos. */
  strategies: readonly Strategy[];
  /** Wraps everything, hedge included. */
  fallback?: FallbackStrategy<unknown> | undefined;
  /** Wraps the whole strategy pipeline; each hedged attempt passes through it. */
  hedge?: HedgeStrategy | undefined;
  /** When a store throws: admit the call on local state (true, default) or reject with `resilience_store_unavailable`. */
  failOpenOnStoreError?: boolean;
  /**
   * Gives results a verdict (SPEC §14.3): a result classified `{ kind }` is a failure of that kind for every
   * strategy; `run` still resolves with the last result when the call ends on one. A function, or the name of a
   * registered one (`'http'` is built in: {@link classifyHttpResponse}) — the form a JSON spec uses.
   */
  classifyResult?: ResultClassifier | string | undefined;
  /**
   * `shadow` (SPEC §14.3): the call runs as if the policy were absent — nothing is rejected, aborted, retried, hedged
   * or replaced by a fallback — while every decision is still made and reported (events with `shadow: true`). For
   * watching a new policy on live traffic before enforcing it. `admin.setMode` switches it at run time.
   */
  mode?: PolicyMode;
}

/** The options `new ResiliencePolicy` takes; any other key is a violation. @internal */
export const POLICY_OPTION_KEYS: readonly string[] = [
  'name',
  'strategies',
  'fallback',
  'hedge',
  'failOpenOnStoreError',
  'classifyResult',
  'mode',
];

/** The fields a policy sets from its strategies, which a spread policy (`{ ...policy }`) carries along. */
const DERIVED_KEYS: readonly string[] = [
  'classifyResultName',
  'rateLimit',
  'bulkhead',
  'circuitBreaker',
  'adaptiveThrottle',
  'retry',
  'timeout',
  'chaos',
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
  /** The result classifier, resolved from a name when one was given. */
  readonly classifyResult: ResultClassifier | undefined;
  /** The registered name it was given by, if any (what `policyToSpec` writes). */
  readonly classifyResultName: string | undefined;
  /** As configured; `admin.setMode` overrides it at run time without changing the policy. */
  readonly mode: PolicyMode;
  readonly rateLimit: RateLimitStrategy | undefined;
  readonly bulkhead: AnyBulkheadStrategy | undefined;
  readonly circuitBreaker: CircuitBreakerStrategy | undefined;
  readonly adaptiveThrottle: AdaptiveThrottleStrategy | undefined;
  readonly retry: RetryStrategy | undefined;
  readonly timeout: TimeoutStrategy | undefined;
  /** The chaos strategy as configured; the settings in force live in the policy's runtime (`admin.setChaos`). */
  readonly chaos: ChaosStrategy | undefined;

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
    const classifier = resolveClassifier(v, o['classifyResult'], o['classifyResultName']);
    const mode = o['mode'];
    if (mode !== undefined && !POLICY_MODES.includes(mode as PolicyMode))
      v.fail('mode', `one of ${POLICY_MODES.map((m) => `'${m}'`).join(', ')}`, mode);
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
    this.classifyResult = classifier.fn;
    this.classifyResultName = classifier.name;
    this.mode = (mode as PolicyMode | undefined) ?? 'enforce';
    let rateLimit: RateLimitStrategy | undefined;
    let bulkhead: AnyBulkheadStrategy | undefined;
    let circuitBreaker: CircuitBreakerStrategy | undefined;
    let adaptiveThrottle: AdaptiveThrottleStrategy | undefined;
    let retry: RetryStrategy | undefined;
    let timeout: TimeoutStrategy | undefined;
    let chaos: ChaosStrategy | undefined;
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
        case 'chaos':
          chaos = s;
          break;
      }
    }
    this.rateLimit = rateLimit;
    this.bulkhead = bulkhead;
    this.circuitBreaker = circuitBreaker;
    this.adaptiveThrottle = adaptiveThrottle;
    this.retry = retry;
    this.timeout = timeout;
    this.chaos = chaos;
    Object.freeze(this);
  }
}

/** A function, or the name of a registered classifier (a spread policy also carries the name it was given by). */
function resolveClassifier(
  v: OptionsValidator,
  value: unknown,
  carriedName: unknown,
): { fn: ResultClassifier | undefined; name: string | undefined } {
  if (value === undefined) return { fn: undefined, name: undefined };
  if (typeof value === 'function') {
    const named = typeof carriedName === 'string' ? namedResultClassifier(carriedName) : undefined;
    return { fn: value as ResultClassifier, name: named === value ? (carriedName as string) : undefined };
  }
  if (typeof value === 'string') {
    const fn = namedResultClassifier(value);
    if (fn !== undefined) return { fn, name: value };
  }
  const names = resultClassifierNames()
    .map((n) => `'${n}'`)
    .join(', ');
  v.fail(
    'classifyResult',
    `a function (result) => verdict | undefined, or a registered name (${names})`,
    value,
  );
  return { fn: undefined, name: undefined };
}
