import { OptionsValidator, Rules } from '../validation/options-validator';
import type { CircuitBreakerOptions, ResolvedCircuitBreakerOptions } from './types';

/** The options `circuitBreaker` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const CIRCUIT_BREAKER_OPTION_KEYS: readonly string[] = [
  'failureRatio',
  'samplingWindow',
  'minThroughput',
  'breakDuration',
  'halfOpenMaxCalls',
  'maxBreakDuration',
  'breakDurationMultiplier',
];

/** Each re-open after a failed half-open period doubles the break, by default (SPEC §14.3). */
export const DEFAULT_BREAK_MULTIPLIER = 2;

/**
 * Circuit breaker (SPEC §4, §11.9; Nygard, *Release It!*): over a rolling `samplingWindow`, trips when at least
 * `minThroughput` calls were recorded and `failures / calls ≥ failureRatio`; stays open for `breakDuration`, then
 * admits `halfOpenMaxCalls` probes which must all succeed to close. Rejects with `infrastructure` / `circuit_open`.
 * With `maxBreakDuration`, a dependency that keeps failing its probes is probed less and less often (the break grows
 * by `breakDurationMultiplier` per failed half-open period, up to the cap), instead of every `breakDuration`.
 */
export class CircuitBreakerStrategy {
  readonly type = 'circuitBreaker' as const;
  readonly options: ResolvedCircuitBreakerOptions;

  constructor(options: CircuitBreakerOptions) {
    const v = new OptionsValidator('CircuitBreakerStrategy');
    const o = v.options(options, CIRCUIT_BREAKER_OPTION_KEYS, 'circuitBreaker');
    const failureRatio = v.number('failureRatio', o['failureRatio'], Rules.RATIO);
    const samplingWindow = v.duration('samplingWindow', o['samplingWindow'], true);
    const minThroughput = v.number('minThroughput', o['minThroughput'], Rules.COUNT_AT_LEAST_ONE);
    const breakDuration = v.duration('breakDuration', o['breakDuration'], true);
    const halfOpenMaxCalls = v.optionalNumber(
      'halfOpenMaxCalls',
      o['halfOpenMaxCalls'],
      Rules.COUNT_AT_LEAST_ONE,
      1,
    );
    const maxBreakDuration = v.optionalDuration('maxBreakDuration', o['maxBreakDuration'], true);
    if (maxBreakDuration !== undefined && maxBreakDuration < breakDuration)
      v.fail('maxBreakDuration', `≥ breakDuration (${breakDuration} ms)`, o['maxBreakDuration']);
    const breakDurationMultiplier = v.optionalNumber(
      'breakDurationMultiplier',
      o['breakDurationMultiplier'],
      Rules.AT_LEAST_ONE,
      DEFAULT_BREAK_MULTIPLIER,
    );
    // Without a cap the multiplier would silently do nothing; the default itself is accepted (a spread of resolved
    // options carries it).
    if (
      maxBreakDuration === undefined &&
      o['maxBreakDuration'] === undefined &&
      o['breakDurationMultiplier'] !== undefined &&
      breakDurationMultiplier !== DEFAULT_BREAK_MULTIPLIER
    )
      v.fail('breakDurationMultiplier', 'set only with maxBreakDuration', o['breakDurationMultiplier']);
    this.options = Object.freeze({
      failureRatio,
      samplingWindow,
      minThroughput,
      breakDuration,
      halfOpenMaxCalls,
      maxBreakDuration,
      breakDurationMultiplier,
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
