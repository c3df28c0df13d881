import type { OptionsValidator } from '../validation/options-validator';
import { Rules } from '../validation/options-validator';
import type { ResolvedQueueOptions } from './types';

/** Default CoDel interval (Fail at Scale / Nichols & Jacobson: 100 ms). */
export const DEFAULT_QUEUE_INTERVAL = 100;

const QUEUE_OPTION_NAMES = [
  'queueTarget',
  'queueInterval',
  'queueAdaptiveLifo',
  'prioritized',
  'maxWait',
] as const;

/** The queue options every bulkhead takes. @internal */
export const QUEUE_OPTION_KEYS: readonly string[] = ['maxQueue', ...QUEUE_OPTION_NAMES];

/**
 * Resolves `maxQueue` and the queue options shared by the three bulkheads (SPEC §4): a queue option given while
 * `maxQueue` is 0 is a violation (it would silently do nothing), and `queueTarget` must be below `queueInterval`
 * (CoDel's target is the tolerated standing delay inside each interval).
 * @internal
 */
export function resolveQueueOptions(
  v: OptionsValidator,
  o: Readonly<Record<string, unknown>>,
): ResolvedQueueOptions {
  const maxQueue = v.optionalNumber('maxQueue', o['maxQueue'], Rules.COUNT, 0);
  const queueTarget = v.optionalDuration('queueTarget', o['queueTarget'], false);
  const queueInterval = v.optionalDuration('queueInterval', o['queueInterval'], true, DEFAULT_QUEUE_INTERVAL);
  const queueAdaptiveLifo = v.boolean('queueAdaptiveLifo', o['queueAdaptiveLifo'], false);
  const prioritized = v.boolean('prioritized', o['prioritized'], false);
  const maxWait = v.optionalDuration('maxWait', o['maxWait'], true);
  if (maxQueue === 0) {
    // A value equal to the default changes nothing and is accepted: a strategy's resolved `options` spread into
    // a new one (`{ ...s.options, maxConcurrency: 8 }`) carries every default.
    const resolved = { queueTarget, queueInterval, queueAdaptiveLifo, prioritized, maxWait };
    const defaults = {
      queueTarget: undefined,
      queueInterval: DEFAULT_QUEUE_INTERVAL,
      queueAdaptiveLifo: false,
      prioritized: false,
      maxWait: undefined,
    };
    for (const name of QUEUE_OPTION_NAMES)
      if (o[name] !== undefined && resolved[name] !== defaults[name])
        v.fail(name, 'set only with maxQueue ≥ 1', o[name]);
  }
  if (queueTarget !== undefined && queueTarget >= queueInterval)
    v.fail('queueTarget', `< queueInterval (${queueInterval} ms)`, o['queueTarget']);
  return { maxQueue, queueTarget, queueInterval, queueAdaptiveLifo, prioritized, maxWait };
}

/** Checks `1 ≤ minConcurrency ≤ maxConcurrency` once both are valid. @internal */
export function checkConcurrencyRange(v: OptionsValidator, min: number, max: number, given: unknown): void {
  if (Number.isFinite(min) && Number.isFinite(max) && min > max)
    v.fail('minConcurrency', `≤ maxConcurrency (${max})`, given);
}
