import { OptionsValidator, Rules } from '../validation/options-validator';
import { checkConcurrencyRange, resolveQueueOptions, QUEUE_OPTION_KEYS } from './queue-options';
import type { GradientBulkheadOptions, ResolvedGradientBulkheadOptions } from './types';

/** Default `windowSize` of the gradient bulkhead (Netflix `WindowedLimit`'s `DEFAULT_WINDOW_SIZE`). */
export const DEFAULT_GRADIENT_WINDOW_SIZE = 10;
/** Default `minWindowTime` and `maxWindowTime` in ms (Netflix `WindowedLimit`: 1 s each). */
export const DEFAULT_GRADIENT_WINDOW_TIME = 1000;

/** The options `gradientBulkhead` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const GRADIENT_BULKHEAD_OPTION_KEYS: readonly string[] = [
  'maxConcurrency',
  'minConcurrency',
  'initialLimit',
  'rttTolerance',
  'smoothing',
  'longWindow',
  'headroom',
  'windowSize',
  'minWindowTime',
  'maxWindowTime',
  ...QUEUE_OPTION_KEYS,
];

/**
 * Gradient2 concurrency limit (SPEC §3–§4, on `@ballast/gradient2`, Netflix concurrency-limits `Gradient2Limit`):
 * the limit follows the ratio of long-term to current RTT of successful calls, plus `headroom`. `initialLimit`
 * defaults to `maxConcurrency` and must lie in `[minConcurrency, maxConcurrency]`.
 *
 * Gradient2 is fed through a sample window, as Netflix deploys it (`WindowedLimit`): one sample per window of at
 * least `windowSize` successful calls (default 10), carrying the window's average RTT and its largest in-flight
 * count; a window lasts `clamp(2 × its minimum RTT, minWindowTime, maxWindowTime)` (default 1 s). `maxWindowTime`
 * defaults to `max(1 s, minWindowTime)` and must be ≥ `minWindowTime`.
 */
export class GradientBulkheadStrategy {
  readonly type = 'gradientBulkhead' as const;
  readonly options: ResolvedGradientBulkheadOptions;

  constructor(options: GradientBulkheadOptions) {
    const v = new OptionsValidator('GradientBulkheadStrategy');
    const o = v.options(options, GRADIENT_BULKHEAD_OPTION_KEYS, 'gradientBulkhead');
    const maxConcurrency = v.number('maxConcurrency', o['maxConcurrency'], Rules.COUNT_AT_LEAST_ONE);
    const minConcurrency = v.optionalNumber(
      'minConcurrency',
      o['minConcurrency'],
      Rules.COUNT_AT_LEAST_ONE,
      1,
    );
    checkConcurrencyRange(v, minConcurrency, maxConcurrency, o['minConcurrency']);
    const initialLimit = v.optionalNumber(
      'initialLimit',
      o['initialLimit'],
      Rules.COUNT_AT_LEAST_ONE,
      maxConcurrency,
    );
    if (o['initialLimit'] !== undefined && Number.isFinite(initialLimit) && Number.isFinite(maxConcurrency)) {
      if (initialLimit > maxConcurrency || initialLimit < minConcurrency)
        v.fail(
          'initialLimit',
          `in [minConcurrency, maxConcurrency] = [${minConcurrency}, ${maxConcurrency}]`,
          initialLimit,
        );
    }
    const windowSize = v.optionalNumber(
      'windowSize',
      o['windowSize'],
      Rules.COUNT_AT_LEAST_ONE,
      DEFAULT_GRADIENT_WINDOW_SIZE,
    );
    const minWindowTime = v.optionalDuration(
      'minWindowTime',
      o['minWindowTime'],
      false,
      DEFAULT_GRADIENT_WINDOW_TIME,
    );
    const maxWindowTime = v.optionalDuration(
      'maxWindowTime',
      o['maxWindowTime'],
      false,
      Math.max(DEFAULT_GRADIENT_WINDOW_TIME, Number.isFinite(minWindowTime) ? minWindowTime : 0),
    );
    if (
      o['maxWindowTime'] !== undefined &&
      Number.isFinite(minWindowTime) &&
      Number.isFinite(maxWindowTime) &&
      maxWindowTime < minWindowTime
    )
      v.fail('maxWindowTime', `≥ minWindowTime (${minWindowTime} ms)`, o['maxWindowTime']);
    this.options = Object.freeze({
      maxConcurrency,
      minConcurrency,
      initialLimit,
      rttTolerance: v.optionalNumber('rttTolerance', o['rttTolerance'], Rules.AT_LEAST_ONE, 1.5),
      smoothing: v.optionalNumber('smoothing', o['smoothing'], Rules.RATIO, 0.2),
      longWindow: v.optionalNumber('longWindow', o['longWindow'], Rules.COUNT_AT_LEAST_ONE, 600),
      headroom: v.optionalNumber('headroom', o['headroom'], Rules.NON_NEGATIVE, 4),
      windowSize,
      minWindowTime,
      maxWindowTime,
      ...resolveQueueOptions(v, o),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
