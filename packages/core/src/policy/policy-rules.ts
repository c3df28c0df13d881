import type { OptionsValidator } from '../validation/options-validator';
import { FallbackStrategy } from '../strategies/fallback-strategy';
import { HedgeStrategy } from '../strategies/hedge-strategy';
import { isStrategy } from '../strategies/strategy';
import type { Strategy } from '../strategies/strategy';

/** The policy slot each strategy type fills; the three bulkhead kinds share one. @internal */
export type StrategySlot =
  'rateLimit' | 'bulkhead' | 'circuitBreaker' | 'adaptiveThrottle' | 'retry' | 'timeout' | 'chaos';

export const SLOT_OF_TYPE: Readonly<Record<Strategy['type'], StrategySlot>> = Object.freeze({
  rateLimit: 'rateLimit',
  bulkhead: 'bulkhead',
  adaptiveBulkhead: 'bulkhead',
  gradientBulkhead: 'bulkhead',
  circuitBreaker: 'circuitBreaker',
  adaptiveThrottle: 'adaptiveThrottle',
  retry: 'retry',
  timeout: 'timeout',
  chaos: 'chaos',
});

/**
 * Composition order, outer → inner (SPEC §4): rate limit rejects before a bulkhead slot or breaker outcome is
 * touched; the bulkhead bounds everything below it; the breaker/throttle sees one outcome per logical call because
 * retry sits inside it; timeout sits inside retry so each attempt gets its own; chaos is innermost, inside the
 * timeout, so injected latency meets it (SPEC §14.3).
 */
export const SLOT_RANK: Readonly<Record<StrategySlot, number>> = Object.freeze({
  rateLimit: 0,
  bulkhead: 1,
  circuitBreaker: 2,
  adaptiveThrottle: 2,
  retry: 3,
  timeout: 4,
  chaos: 5,
});

/** The raw parts of a policy, before validation. @internal */
export interface PolicyParts {
  readonly name: unknown;
  readonly strategies: unknown;
  readonly fallback: unknown;
  readonly hedge: unknown;
  readonly failOpenOnStoreError: unknown;
  /**
   * For a JSON spec: the declared `type` of each entry. An `undefined` strategy entry (one whose own options
   * already failed) is then still checked against the composition rules by its declared type, and skipped when
   * that is unknown too.
   */
  readonly declaredTypes?: readonly (Strategy['type'] | undefined)[];
}

/**
 * Checks the policy-level rules (SPEC §4): a non-blank name; strategies are Ballast strategy instances; at most one
 * strategy per slot; the bulkhead kinds and breaker/throttle are mutually exclusive; hedge and fallback have the
 * right classes. Returns the valid strategies in canonical order. @internal
 */
export function checkPolicyParts(v: OptionsValidator, parts: PolicyParts): Strategy[] {
  const { name, declaredTypes } = parts;
  v.check(typeof name === 'string' && name.trim() !== '', 'name', 'a non-blank string', name);
  const valid: Strategy[] = [];
  if (!Array.isArray(parts.strategies)) {
    v.fail('strategies', 'an array of strategies', parts.strategies);
  } else {
    const taken = new Map<StrategySlot, { index: number; type: Strategy['type'] }>();
    parts.strategies.forEach((s: unknown, index) => {
      let type: Strategy['type'];
      if (isStrategy(s)) {
        type = s.type;
      } else if (declaredTypes !== undefined) {
        const declared = declaredTypes[index];
        if (declared === undefined) return;
        type = declared;
      } else {
        v.fail(`strategies[${index}]`, 'a Ballast strategy instance (e.g. new RetryStrategy({...}))', s);
        return;
      }
      const slot = SLOT_OF_TYPE[type];
      const rival: StrategySlot | undefined =
        slot === 'circuitBreaker'
          ? 'adaptiveThrottle'
          : slot === 'adaptiveThrottle'
            ? 'circuitBreaker'
            : undefined;
      const same = taken.get(slot);
      const other = rival === undefined ? undefined : taken.get(rival);
      if (same !== undefined) {
        const constraint =
          same.type === type
            ? `the only ${type} strategy (strategies[${same.index}] is one already)`
            : `the only bulkhead: bulkhead, adaptiveBulkhead and gradientBulkhead are mutually exclusive (strategies[${same.index}] is a ${same.type})`;
        v.fail(`strategies[${index}]`, constraint, s);
      } else if (other !== undefined) {
        v.fail(
          `strategies[${index}]`,
          `not combined with strategies[${other.index}]: circuitBreaker and adaptiveThrottle are mutually exclusive`,
          s,
        );
      } else {
        taken.set(slot, { index, type });
        if (isStrategy(s)) valid.push(s);
      }
    });
  }
  if (parts.fallback !== undefined && !(parts.fallback instanceof FallbackStrategy))
    v.fail('fallback', 'a FallbackStrategy', parts.fallback);
  if (parts.hedge !== undefined && !(parts.hedge instanceof HedgeStrategy))
    v.fail('hedge', 'a HedgeStrategy', parts.hedge);
  v.boolean('failOpenOnStoreError', parts.failOpenOnStoreError, true);
  return valid.sort((a, b) => SLOT_RANK[SLOT_OF_TYPE[a.type]] - SLOT_RANK[SLOT_OF_TYPE[b.type]]);
}
