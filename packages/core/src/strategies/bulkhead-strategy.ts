import { OptionsValidator, Rules } from '../validation/options-validator';
import { resolveQueueOptions, QUEUE_OPTION_KEYS } from './queue-options';
import type { BulkheadOptions, ResolvedBulkheadOptions } from './types';

/** The options `bulkhead` takes (a JSON spec's keys for it too); any other key is a violation. @internal */
export const BULKHEAD_OPTION_KEYS: readonly string[] = ['maxConcurrency', ...QUEUE_OPTION_KEYS];

/**
 * Fixed-concurrency bulkhead (SPEC §4): at most `maxConcurrency` calls run at once; with `maxQueue ≥ 1` the rest
 * wait in a bounded CoDel queue (`queueTarget`, `queueInterval`, `queueAdaptiveLifo`, `prioritized`). Rejects with
 * `infrastructure` / `bulkhead_full` or `bulkhead_queue_shed`.
 */
export class BulkheadStrategy {
  readonly type = 'bulkhead' as const;
  readonly options: ResolvedBulkheadOptions;

  constructor(options: BulkheadOptions) {
    const v = new OptionsValidator('BulkheadStrategy');
    const o = v.options(options, BULKHEAD_OPTION_KEYS, 'bulkhead');
    this.options = Object.freeze({
      maxConcurrency: v.number('maxConcurrency', o['maxConcurrency'], Rules.COUNT_AT_LEAST_ONE),
      ...resolveQueueOptions(v, o),
    });
    v.throwIfInvalid();
    Object.freeze(this);
  }
}
