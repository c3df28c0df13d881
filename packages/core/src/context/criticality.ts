import { Criticality, isCriticality } from '@ballast/codel';
import { ResilienceError } from '../errors/resilience-error';
import { contextStorage, notAFunction, runInFrame0 } from './context-storage';
import type { ContextFrame } from './context-storage';

/**
 * Request criticality (SPEC §5, §11.4): `Criticality` is `@ballast/codel`'s, re-exported unchanged, so the queue
 * tiers and the ambient level are the same numbers. Prioritized bulkhead queues shed lower tiers first
 * (Google *SRE* book, ch. 21 "Handling Overload": criticality CRITICAL_PLUS … SHEDDABLE).
 */
export { Criticality };

/**
 * Runs `fn` with `level` as the ambient criticality for everything it awaits. An explicit override, not
 * tighten-only: a handler may mark background work BEST_EFFORT or a health probe CRITICAL. An unknown level is a
 * `configuration` error (a typo must not silently become NORMAL).
 */
export function bindCriticality<T>(level: Criticality, fn: () => T): T {
  if (!isCriticality(level)) {
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid criticality: expected 0, 1, 2 or 3 (Criticality.BEST_EFFORT … CRITICAL), got ${String(level)}`,
      details: { value: level },
    });
  }
  if (typeof fn !== 'function') throw notAFunction('bindCriticality', fn);
  const parent = contextStorage.getStore();
  const frame: ContextFrame = {
    deadline: parent?.deadline,
    deadlineClock: parent?.deadlineClock,
    criticality: level,
    call: parent?.call,
  };
  return runInFrame0(frame, fn);
}

/** The ambient criticality; `Criticality.NORMAL` when none is bound. */
export function currentCriticality(): Criticality {
  return (contextStorage.getStore()?.criticality ?? Criticality.NORMAL) as Criticality;
}
