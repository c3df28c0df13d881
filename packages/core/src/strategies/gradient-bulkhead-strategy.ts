import { OptionsValidator, Rules } from '../validation/options-validator';
import { checkConcurrencyRange, resolveQueueOptions } from './queue-options';
import type { GradientBulkheadOptions, ResolvedGradientBulkheadOptions } from './types';

/**
 * Gradient2 concurrency limit (SPEC §3–§4, on `@ballast/gradient2`, Netflix concurrency-limits `Gradient2Limit`):
 * the limit follows the ratio of long-term to current RTT of successful calls, plus `headroom`. `initialLimit`
 * defaults to `maxConcurrency` and must lie in `[minConcurrency, maxConcurrency]`.
 */
export class GradientBulkheadStrategy {
  readonly type = 'gradientBulkhead' as const;
  readonly options: ResolvedGradientBulkheadOptions;

  constructor(options: GradientBulkheadOptions) {
    const v = new OptionsValidator('GradientBulkheadStrategy');
    const o = v.object('', options);
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
    this.options = Object.freeze({
      maxConcurrency,
      minConcurrency,
      initialLimit,
      rttTolerance: v.optionalNumber('rttTolerance', o['rttTolerance'], Rules.AT_LEAST_ONE, 1.5),
      smoothing: v.optionalNumber('smoothing', o['smoothing'], Rules.RATIO, 0.2),
      longWindow: v.optionalNumber('longWindow', o['longWindow'], Rules.COUNT_AT_LEAST_ONE, 600),
      headroom: v.optionalNumber('headroom', o['headroom'], Rules.NON_NEGATIVE, 4),
      ...resolveQueueOptions(v, o),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
