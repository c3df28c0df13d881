import { OptionsValidator } from '../validation/options-validator';
import type { ResolvedTimeoutOptions, TimeoutOptions } from './types';

/** The options `timeout` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const TIMEOUT_OPTION_KEYS: readonly string[] = ['timeout'];

/**
 * Per-attempt timeout (SPEC §4): aborts the attempt's signal after `timeout` and settles at once with
 * `infrastructure` / `attempt_timeout`, even when the function ignores its signal. Sits inside retry, so each
 * attempt gets its own timeout.
 */
export class TimeoutStrategy {
  readonly type = 'timeout' as const;
  readonly options: ResolvedTimeoutOptions;

  constructor(options: TimeoutOptions) {
    const v = new OptionsValidator('TimeoutStrategy');
    const o = v.options(options, TIMEOUT_OPTION_KEYS, 'timeout');
    this.options = Object.freeze({ timeout: v.duration('timeout', o['timeout'], true) });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
