import { OptionsValidator, Rules } from '../validation/options-validator';
import { BackoffStrategy } from './backoff-strategy';
import { RetryBudget, resolveBudget } from './retry-budget';
import type { BackoffOptions, RetryBudgetOptions, RetryableKind } from './types';

export const RETRYABLE_KIND_LIST: readonly RetryableKind[] = Object.freeze([
  'concurrency',
  'infrastructure',
  'throttled',
]);

export interface RetryOptions {
  /** Attempts in total, counting the first (≥ 1). */
  maxAttempts: number;
  /** Default `new BackoffStrategy({ base: '100ms', max: '10s' })` (decorrelated jitter). */
  backoff?: BackoffStrategy | BackoffOptions;
  /** Kinds worth another attempt; only retryable kinds are allowed. Default `['infrastructure']`. */
  retryOn?: readonly RetryableKind[];
  budget?: RetryBudget | RetryBudgetOptions;
  /**
   * A custom delay (ms) before the retry that follows failed attempt `attempt` (1 for the first retry): a number
   * wins over `backoff`, `undefined` leaves it to `backoff`. `Infinity` ends the retries with the real error. A
   * negative, NaN or non-number answer, or a throw, fails the call with `internal` / `callback_failed` (a bug made
   * visible, not a retry storm). Code only: a JSON spec cannot carry it.
   */
  delay?: RetryDelay;
}

/** See {@link RetryOptions.delay}. */
export type RetryDelay = (attempt: number, error: unknown) => number | undefined;

export interface ResolvedRetryOptions {
  readonly maxAttempts: number;
  readonly backoff: BackoffStrategy;
  readonly retryOn: readonly RetryableKind[];
  readonly budget: RetryBudget | undefined;
  readonly delay: RetryDelay | undefined;
}

/** The default backoff: 100 ms doubling up to 10 s, decorrelated jitter. */
export const DEFAULT_BACKOFF = new BackoffStrategy({ base: '100ms', max: '10s' });
const DEFAULT_RETRY_ON: readonly RetryableKind[] = Object.freeze(['infrastructure']);

/** The options `retry` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const RETRY_OPTION_KEYS: readonly string[] = ['maxAttempts', 'backoff', 'retryOn', 'budget', 'delay'];

/**
 * Retry (SPEC §4): up to `maxAttempts` attempts on errors whose kind is in `retryOn`, sleeping `backoff` between
 * them, spending a `budget` token per retry when one is set. The executor never sleeps past the deadline and
 * honours a `throttled` error's `retryAfter` when it is longer than the backoff, up to `backoff.max` (a longer
 * hint ends the retries with the real error). Only retryable kinds
 * (`concurrency`, `infrastructure`, `throttled`) may be listed: retrying a `validation` error cannot succeed.
 */
export class RetryStrategy {
  readonly type = 'retry' as const;
  readonly options: ResolvedRetryOptions;

  constructor(options: RetryOptions) {
    const v = new OptionsValidator('RetryStrategy');
    const o = v.options(options, RETRY_OPTION_KEYS, 'retry');
    this.options = Object.freeze({
      maxAttempts: v.number('maxAttempts', o['maxAttempts'], Rules.COUNT_AT_LEAST_ONE),
      backoff: resolveBackoff(v, o['backoff']),
      retryOn: resolveRetryOn(v, o['retryOn']),
      budget: resolveBudget(v, 'budget', o['budget']),
      delay: resolveDelay(v, o['delay']),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }

  /** True when an error of `kind` may be retried by this strategy. */
  retries(kind: string): boolean {
    return (this.options.retryOn as readonly string[]).includes(kind);
  }
}

function resolveBackoff(v: OptionsValidator, value: unknown): BackoffStrategy {
  if (value === undefined) return DEFAULT_BACKOFF;
  if (value instanceof BackoffStrategy) return value;
  if (typeof value !== 'object' || value === null) {
    v.fail('backoff', 'a BackoffStrategy or { base, max, multiplier?, jitter? }', value);
    return DEFAULT_BACKOFF;
  }
  return v.nested('backoff', () => new BackoffStrategy(value as BackoffOptions)) ?? DEFAULT_BACKOFF;
}

function resolveRetryOn(v: OptionsValidator, value: unknown): readonly RetryableKind[] {
  if (value === undefined) return DEFAULT_RETRY_ON;
  if (!Array.isArray(value) || value.length === 0) {
    v.fail('retryOn', 'a non-empty array of retryable kinds', value);
    return DEFAULT_RETRY_ON;
  }
  const allowed = RETRYABLE_KIND_LIST.map((k) => `'${k}'`).join(', ');
  value.forEach((kind: unknown, i) => {
    if (!(RETRYABLE_KIND_LIST as readonly unknown[]).includes(kind))
      v.fail(`retryOn[${i}]`, `one of ${allowed}`, kind);
  });
  return Object.freeze(value.slice() as RetryableKind[]);
}

function resolveDelay(v: OptionsValidator, value: unknown): RetryDelay | undefined {
  if (value === undefined) return undefined;
  return v.check(
    typeof value === 'function',
    'delay',
    'a function (attempt, error) => number | undefined',
    value,
  )
    ? (value as RetryDelay)
    : undefined;
}
