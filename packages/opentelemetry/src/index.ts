// @ballast/opentelemetry — curated public API (SPEC §8).

export { instrumentResilience } from './instrument-resilience';
export type {
  InstrumentResilienceOptions,
  InstrumentationDisposer,
  InstrumentedResilience,
} from './instrument-resilience';
export { DEFAULT_GAUGE_TIMEOUT } from './options';
export {
  MetricName,
  AttributeKey,
  BreakerStateValue,
  PROMETHEUS_NAMES,
  CALL_DURATION_BUCKETS,
} from './metric-names';
