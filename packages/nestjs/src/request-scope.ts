import { bindCriticality, withDeadline, type Clock } from '@ballast/core';
import type { CriticalityLevel } from './criticality-level';

/** Upper bound on a header budget (1 day): anything larger is a unit mistake, not a deadline. */
const MAX_BUDGET_MS = 86_400_000;

/**
 * Parses a deadline header: a non-negative number of ms (fractions allowed). Malformed or absurd values are
 * ignored rather than rejected — a bad header from one caller must not turn into errors for that caller.
 */
export function parseBudget(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '' || !/^\d+(\.\d+)?$/.test(trimmed)) return undefined;
  const ms = Number(trimmed);
  return ms <= MAX_BUDGET_MS ? ms : undefined;
}

/**
 * Runs `fn` with the request's deadline and criticality bound (AsyncLocalStorage, core's `withDeadline` and
 * `bindCriticality`), so everything it awaits — the policy's strategies, decorated providers, nested runs — sees
 * them. The deadline is measured on the Resilience clock, which is what the strategies read.
 */
export function inScope<T>(
  budget: number | undefined,
  criticality: CriticalityLevel | undefined,
  clock: Clock,
  fn: () => T,
): T {
  if (budget === undefined) return criticality === undefined ? fn() : bindCriticality(criticality, fn);
  if (criticality === undefined) return withDeadline(budget, fn, clock);
  return withDeadline(budget, () => bindCriticality(criticality, fn), clock);
}
