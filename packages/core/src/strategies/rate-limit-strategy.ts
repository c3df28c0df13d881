import { OptionsValidator, Rules } from '../validation/options-validator';
import type { RateLimitOptions, ResolvedRateLimitOptions } from './types';

/** The options `rateLimit` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const RATE_LIMIT_OPTION_KEYS: readonly string[] = ['permits', 'per', 'burst'];

/**
 * Token-bucket rate limit (SPEC §4, on `@ballast/token-bucket` through the `RateLimitStore`): `permits` per `per`,
 * bursts up to `burst` (default `permits`). Rejects at once with `throttled` / `rate_limited` and a `retryAfter`;
 * it never queues — put an outer retry on `throttled` around it to wait instead.
 */
export class RateLimitStrategy {
  readonly type = 'rateLimit' as const;
  readonly options: ResolvedRateLimitOptions;

  constructor(options: RateLimitOptions) {
    const v = new OptionsValidator('RateLimitStrategy');
    const o = v.options(options, RATE_LIMIT_OPTION_KEYS, 'rateLimit');
    const permits = v.number('permits', o['permits'], Rules.AT_LEAST_ONE);
    this.options = Object.freeze({
      permits,
      per: v.duration('per', o['per'], true),
      burst: v.optionalNumber('burst', o['burst'], Rules.AT_LEAST_ONE, permits),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
