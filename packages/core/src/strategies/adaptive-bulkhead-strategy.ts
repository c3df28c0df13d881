import { OptionsValidator, Rules } from '../validation/options-validator';
import { checkConcurrencyRange, resolveQueueOptions, QUEUE_OPTION_KEYS } from './queue-options';
import type { AdaptiveBulkheadOptions, ResolvedAdaptiveBulkheadOptions } from './types';

/** Samples per quantile epoch when `latencyQuantile` is set (the windowed P² default). */
export const DEFAULT_LATENCY_WINDOW = 512;

/** The options `adaptiveBulkhead` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const ADAPTIVE_BULKHEAD_OPTION_KEYS: readonly string[] = [
  'latencyThreshold',
  'maxConcurrency',
  'minConcurrency',
  'backoffRatio',
  'increaseStep',
  'cooldown',
  'latencyQuantile',
  'window',
  ...QUEUE_OPTION_KEYS,
];

/**
 * AIMD concurrency limit (SPEC §3–§4, on `@ballast/aimd`): grows by `increaseStep / limit` per healthy sample and
 * multiplies by `backoffRatio` when latency — each sample, or the windowed P² `latencyQuantile` — exceeds
 * `latencyThreshold`, at most once per `cooldown` (TCP congestion avoidance; Netflix concurrency-limits `AIMDLimit`).
 * `window` is the number of samples per quantile epoch (≥ 5, the P² minimum).
 */
export class AdaptiveBulkheadStrategy {
  readonly type = 'adaptiveBulkhead' as const;
  readonly options: ResolvedAdaptiveBulkheadOptions;

  constructor(options: AdaptiveBulkheadOptions) {
    const v = new OptionsValidator('AdaptiveBulkheadStrategy');
    const o = v.options(options, ADAPTIVE_BULKHEAD_OPTION_KEYS, 'adaptiveBulkhead');
    const maxConcurrency = v.number('maxConcurrency', o['maxConcurrency'], Rules.COUNT_AT_LEAST_ONE);
    const minConcurrency = v.optionalNumber(
      'minConcurrency',
      o['minConcurrency'],
      Rules.COUNT_AT_LEAST_ONE,
      1,
    );
    checkConcurrencyRange(v, minConcurrency, maxConcurrency, o['minConcurrency']);
    this.options = Object.freeze({
      latencyThreshold: v.duration('latencyThreshold', o['latencyThreshold'], true),
      maxConcurrency,
      minConcurrency,
      backoffRatio: v.optionalNumber('backoffRatio', o['backoffRatio'], Rules.OPEN_UNIT, 0.9),
      increaseStep: v.optionalNumber('increaseStep', o['increaseStep'], Rules.POSITIVE, 1),
      cooldown: v.optionalDuration('cooldown', o['cooldown'], false, 1000),
      latencyQuantile: v.optionalNumber('latencyQuantile', o['latencyQuantile'], Rules.OPEN_UNIT),
      window: v.optionalNumber('window', o['window'], { integer: true, min: 5 }, DEFAULT_LATENCY_WINDOW),
      ...resolveQueueOptions(v, o),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
