import { OptionsValidator, Rules } from '../validation/options-validator';
import type { ResolvedRetryBudgetOptions, RetryBudgetOptions } from './types';

/** The options `budget` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const BUDGET_OPTION_KEYS: readonly string[] = ['ratio', 'minThroughput'];

/**
 * A retry budget (SPEC §4): caps retries and hedges to a fraction of traffic so a struggling dependency is not
 * hit by a retry storm (Google *SRE* book, ch. 22 "Addressing Cascading Failures": per-client retry budgets;
 * Finagle's `RetryBudget`). A token bucket: each call earns `ratio` tokens, each retry or hedge spends one; the
 * bucket holds at most `max(1, minThroughput·ratio)`, so `minThroughput` lets a quiet client still retry a little.
 */
export class RetryBudget {
  readonly options: ResolvedRetryBudgetOptions;

  constructor(options: RetryBudgetOptions) {
    const v = new OptionsValidator('RetryBudget');
    const o = v.options(options, BUDGET_OPTION_KEYS, 'budget');
    this.options = Object.freeze({
      ratio: v.number('ratio', o['ratio'], Rules.RATIO),
      minThroughput: v.optionalNumber('minThroughput', o['minThroughput'], Rules.COUNT, 0),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}

/** Absorbs float drift: ten deposits of 0.1 must buy one retry. */
const EPSILON = 1e-9;

/**
 * The mutable balance of one budget, per (policy, route) — created by the executor. Starts full.
 * Pure and synchronous: no clock (the budget is per call, not per second).
 */
export class RetryBudgetState {
  readonly #ratio: number;
  readonly #cap: number;
  #balance: number;

  constructor(options: ResolvedRetryBudgetOptions) {
    this.#ratio = options.ratio;
    this.#cap = Math.max(1, options.minThroughput * options.ratio);
    this.#balance = this.#cap;
  }

  /** Tokens available (fractional). */
  get balance(): number {
    return this.#balance;
  }

  /** The bucket's capacity, `max(1, minThroughput·ratio)`. */
  get cap(): number {
    return this.#cap;
  }

  /** One logical call was made: earn `ratio` tokens, up to the cap. */
  onCall(): void {
    const next = this.#balance + this.#ratio;
    this.#balance = next < this.#cap ? next : this.#cap;
  }

  /** Whether {@link tryWithdraw} would succeed now (nothing spent). */
  get canWithdraw(): boolean {
    return this.#balance >= 1 - EPSILON;
  }

  /** Spends one token for a retry or a hedge; `false` (nothing spent) when the budget is exhausted. */
  tryWithdraw(): boolean {
    if (this.#balance < 1 - EPSILON) return false;
    const next = this.#balance - 1;
    this.#balance = next > 0 ? next : 0;
    return true;
  }
}

/** Resolves a `budget` option given as a `RetryBudget` or as plain options (violations under `path`). @internal */
export function resolveBudget(v: OptionsValidator, path: string, value: unknown): RetryBudget | undefined {
  if (value === undefined || value instanceof RetryBudget) return value;
  if (typeof value !== 'object' || value === null) {
    v.fail(path, 'a RetryBudget or { ratio, minThroughput? }', value);
    return undefined;
  }
  return v.nested(path, () => new RetryBudget(value as RetryBudgetOptions));
}
