import type { BreakerState } from '@ballast/core';

/**
 * Instrument names of SPEC §8, exported so dashboards, alerts and tests never retype them. Prometheus renders the dots as
 * underscores and appends `_total` to counters (see `PROMETHEUS_NAMES`).
 */
export const MetricName = Object.freeze({
  CALLS: 'ballast.calls',
  CALL_DURATION: 'ballast.call.duration',
  REJECTIONS: 'ballast.rejections',
  RETRIES: 'ballast.retries',
  STORE_DEGRADED: 'ballast.store.degraded',
  BREAKER_STATE: 'ballast.breaker.state',
  BULKHEAD_LIMIT: 'ballast.bulkhead.limit',
  BULKHEAD_IN_USE: 'ballast.bulkhead.in_use',
  BULKHEAD_WAITING: 'ballast.bulkhead.waiting',
  HEDGE_DELAY: 'ballast.hedge.delay',
  THROTTLE_REJECTION_PROBABILITY: 'ballast.throttle.rejection_probability',
  CONTROL_OVERRIDES: 'ballast.control.overrides',
  CONTROL_APPLIED: 'ballast.control.applied',
  CHAOS_INJECTED: 'ballast.chaos.injected',
} as const);

export type MetricName = (typeof MetricName)[keyof typeof MetricName];

/** Attribute keys. `ballast.route` is omitted (not set to '') when the call had no route, so "no route" stays distinct. */
export const AttributeKey = Object.freeze({
  POLICY: 'ballast.policy',
  ROUTE: 'ballast.route',
  OUTCOME: 'ballast.outcome',
  CODE: 'ballast.code',
  STORE: 'ballast.store',
  ACTION: 'ballast.action',
  SCOPE: 'ballast.scope',
  INJECTION: 'ballast.injection',
  /** `true` on what a policy in shadow mode decided but did not enforce (SPEC §14.3); absent otherwise. */
  SHADOW: 'ballast.shadow',
} as const);

/** `ballast.breaker.state` values: ordered by severity, so `max()` across routes is the worst breaker. */
export const BreakerStateValue: Readonly<Record<BreakerState, number>> = Object.freeze({
  closed: 0,
  half_open: 1,
  open: 2,
});

/**
 * The series names `@opentelemetry/exporter-prometheus` writes for each instrument (checked against a real scrape in
 * the tests): dots become underscores, monotonic counters gain `_total`, histograms expand to `_bucket`, `_sum` and
 * `_count`. Units do not become suffixes in that exporter.
 */
export const PROMETHEUS_NAMES: Readonly<Record<MetricName, readonly string[]>> = Object.freeze({
  [MetricName.CALLS]: ['ballast_calls_total'],
  [MetricName.CALL_DURATION]: [
    'ballast_call_duration_bucket',
    'ballast_call_duration_sum',
    'ballast_call_duration_count',
  ],
  [MetricName.REJECTIONS]: ['ballast_rejections_total'],
  [MetricName.RETRIES]: ['ballast_retries_total'],
  [MetricName.STORE_DEGRADED]: ['ballast_store_degraded_total'],
  [MetricName.BREAKER_STATE]: ['ballast_breaker_state'],
  [MetricName.BULKHEAD_LIMIT]: ['ballast_bulkhead_limit'],
  [MetricName.BULKHEAD_IN_USE]: ['ballast_bulkhead_in_use'],
  [MetricName.BULKHEAD_WAITING]: ['ballast_bulkhead_waiting'],
  [MetricName.HEDGE_DELAY]: ['ballast_hedge_delay'],
  [MetricName.THROTTLE_REJECTION_PROBABILITY]: ['ballast_throttle_rejection_probability'],
  [MetricName.CONTROL_OVERRIDES]: ['ballast_control_overrides'],
  [MetricName.CONTROL_APPLIED]: ['ballast_control_applied_total'],
  [MetricName.CHAOS_INJECTED]: ['ballast_chaos_injected_total'],
});

/**
 * Histogram buckets for `ballast.call.duration` (ms). The SDK default (0, 5, 10, … 10 000) lumps every sub-5 ms call into
 * one bucket and overflows at 10 s, below the built-in `transient` policy's 30 s attempt timeout.
 */
export const CALL_DURATION_BUCKETS: readonly number[] = Object.freeze([
  1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000,
]);
