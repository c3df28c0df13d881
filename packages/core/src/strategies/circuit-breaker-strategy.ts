import { OptionsValidator, Rules } from '../validation/options-validator';
import type { CircuitBreakerOptions, ResolvedCircuitBreakerOptions } from './types';

/** The options `circuitBreaker` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const CIRCUIT_BREAKER_OPTION_KEYS: readonly string[] = [
  'failureRatio',
  'samplingWindow',
  'minThroughput',
  'breakDuration',
  'halfOpenMaxCalls',
];

/**
 * Circuit breaker (SPEC §4, §11.9; Nygard, *Release It!*): over a rolling `samplingWindow`, trips when at least
 * `minThroughput` calls were recorded and `failures / calls ≥ failureRatio`; stays open for `breakDuration`, then
 * admits `halfOpenMaxCalls` probes which must all succeed to close. Rejects with `infrastructure` / `circuit_open`.
 */
export class CircuitBreakerStrategy {
  readonly type = 'circuitBreaker' as const;
  readonly options: ResolvedCircuitBreakerOptions;

  constructor(options: CircuitBreakerOptions) {
    const v = new OptionsValidator('CircuitBreakerStrategy');
    const o = v.options(options, CIRCUIT_BREAKER_OPTION_KEYS, 'circuitBreaker');
    this.options = Object.freeze({
      failureRatio: v.number('failureRatio', o['failureRatio'], Rules.RATIO),
      samplingWindow: v.duration('samplingWindow', o['samplingWindow'], true),
      minThroughput: v.number('minThroughput', o['minThroughput'], Rules.COUNT_AT_LEAST_ONE),
      breakDuration: v.duration('breakDuration', o['breakDuration'], true),
      halfOpenMaxCalls: v.optionalNumber(
        'halfOpenMaxCalls',
        o['halfOpenMaxCalls'],
        Rules.COUNT_AT_LEAST_ONE,
        1,
      ),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
