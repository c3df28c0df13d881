import { OptionsValidator, Rules } from '../validation/options-validator';
import { RetryBudget, resolveBudget } from './retry-budget';
import type { HedgeOptions, ResolvedHedgeOptions, RetryBudgetOptions } from './types';

export interface HedgeStrategyOptions extends HedgeOptions {
  /** Each hedged attempt spends one token. */
  budget?: RetryBudget | RetryBudgetOptions;
}

export interface ResolvedHedgeStrategyOptions extends ResolvedHedgeOptions {
  readonly budget: RetryBudget | undefined;
}

/** The options `hedge` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const HEDGE_OPTION_KEYS: readonly string[] = [
  'delay',
  'maxAttempts',
  'budget',
  'adaptiveDelayQuantile',
  'delayMin',
  'delayMax',
];

/**
 * Hedged requests (SPEC §4; Dean & Barroso, "The Tail at Scale", CACM 2013): when the primary attempt has not
 * answered after `delay` — or, with `adaptiveDelayQuantile`, after that quantile of observed primary latencies
 * clamped to `[delayMin, delayMax]` — start another, up to `maxAttempts` in total; the first to succeed wins and
 * the others are aborted. Fires on slowness, not failure. **Only for idempotent work.**
 */
export class HedgeStrategy {
  readonly type = 'hedge' as const;
  readonly options: ResolvedHedgeStrategyOptions;

  constructor(options: HedgeStrategyOptions) {
    const v = new OptionsValidator('HedgeStrategy');
    const o = v.options(options, HEDGE_OPTION_KEYS, 'hedge');
    const adaptiveDelayQuantile = v.optionalNumber(
      'adaptiveDelayQuantile',
      o['adaptiveDelayQuantile'],
      Rules.OPEN_UNIT,
    );
    const delayMin = v.optionalDuration('delayMin', o['delayMin'], false);
    const delayMax = v.optionalDuration('delayMax', o['delayMax'], false);
    if (o['adaptiveDelayQuantile'] === undefined) {
      if (o['delayMin'] !== undefined)
        v.fail('delayMin', 'set only with adaptiveDelayQuantile', o['delayMin']);
      if (o['delayMax'] !== undefined)
        v.fail('delayMax', 'set only with adaptiveDelayQuantile', o['delayMax']);
    }
    if (delayMin !== undefined && delayMax !== undefined && delayMin > delayMax)
      v.fail('delayMax', `≥ delayMin (${delayMin} ms)`, o['delayMax']);
    this.options = Object.freeze({
      delay: v.duration('delay', o['delay'], false),
      maxAttempts: v.number('maxAttempts', o['maxAttempts'], { integer: true, min: 2 }),
      adaptiveDelayQuantile,
      delayMin,
      delayMax,
      budget: resolveBudget(v, 'budget', o['budget']),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
