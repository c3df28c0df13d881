/**
 * How much a request matters when the system must shed load, lowest first — the criticality classes of Google's
 * "Handling Overload" (Site Reliability Engineering, O'Reilly 2016, ch. 21). `@ballast/core` re-exports this object
 * unchanged (SPEC §11.4).
 * @public
 */
export const Criticality = Object.freeze({
  BEST_EFFORT: 0,
  DEGRADED: 1,
  NORMAL: 2,
  CRITICAL: 3,
} as const);

/** A criticality level: 0 = BEST_EFFORT … 3 = CRITICAL. @public */
export type Criticality = (typeof Criticality)[keyof typeof Criticality];

/** True for the four criticality levels. @public */
export function isCriticality(value: unknown): value is Criticality {
  return value === 0 || value === 1 || value === 2 || value === 3;
}
