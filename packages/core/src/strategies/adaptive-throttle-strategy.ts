import { OptionsValidator, Rules } from '../validation/options-validator';
import type { AdaptiveThrottleOptions, ResolvedAdaptiveThrottleOptions } from './types';

/** The options `adaptiveThrottle` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const ADAPTIVE_THROTTLE_OPTION_KEYS: readonly string[] = ['k', 'window', 'minThroughput'];

/**
 * Client-side adaptive throttling (SPEC §3–§4, on `@ballast/sre-throttle`; Google *Site Reliability Engineering*,
 * ch. 21 "Handling Overload"): rejects locally with probability `max(0, (requests − k·accepts) / (requests + 1))`
 * over a rolling `window` (ten time buckets), once `minThroughput` requests were seen. `k = 2` is the book's recommendation; lower `k` sheds
 * more aggressively. Only healthy outcomes count as accepts. Rejects with `throttled` / `adaptive_throttle`.
 */
export class AdaptiveThrottleStrategy {
  readonly type = 'adaptiveThrottle' as const;
  readonly options: ResolvedAdaptiveThrottleOptions;

  constructor(options: AdaptiveThrottleOptions = {}) {
    const v = new OptionsValidator('AdaptiveThrottleStrategy');
    const o = v.options(options, ADAPTIVE_THROTTLE_OPTION_KEYS, 'adaptiveThrottle');
    this.options = Object.freeze({
      k: v.optionalNumber('k', o['k'], Rules.AT_LEAST_ONE, 2),
      window: v.optionalDuration('window', o['window'], true, 120_000),
      minThroughput: v.optionalNumber('minThroughput', o['minThroughput'], Rules.COUNT, 10),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
