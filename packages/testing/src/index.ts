export { FakeClock, flushMicrotasks } from './fake-clock';
export type { FakeTimer } from './fake-clock';
export { seededRandom } from './seeded-random';
export { describeCircuitBreakerStoreConformance } from './conformance/circuit-breaker-store-conformance';
export { describeRateLimitStoreConformance } from './conformance/rate-limit-store-conformance';
export { describeControlStoreConformance } from './conformance/control-store-conformance';
export { describeLatencyDigestStoreConformance } from './conformance/latency-digest-store-conformance';
export type { StoreHarness, StoreSetup, ConformanceOptions } from './conformance/harness';
export type {
  ConformanceKey,
  CircuitBreakerStoreShape,
  RateLimitStoreShape,
  LatencyDigestStoreShape,
  ControlStoreShape,
} from './conformance/store-shapes';
