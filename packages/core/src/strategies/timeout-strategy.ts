import { OptionsValidator } from '../validation/options-validator';
import type { ResolvedTimeoutOptions, TimeoutOptions } from './types';

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
    const o = v.object('', options);
    this.options = Object.freeze({ timeout: v.duration('timeout', o['timeout'], true) });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
