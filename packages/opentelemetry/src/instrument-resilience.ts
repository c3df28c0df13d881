import type { Resilience, ResilienceEvent, ResilienceStateSnapshot } from '@ballast/core';
import {
  metrics,
  ValueType,
  type Attributes,
  type BatchObservableResult,
  type Meter,
  type Observable,
} from '@opentelemetry/api';
import { AttributeTable } from './attribute-table';
import { BreakerStateValue, CALL_DURATION_BUCKETS, MetricName } from './metric-names';

/** The slice of `Resilience` this package needs: its events and its control plane's `inspect`. */
export type InstrumentedResilience = Pick<Resilience, 'on' | 'admin'>;

export interface InstrumentResilienceOptions {
  /** Where instruments are created. Default: `metrics.getMeter('@ballast/opentelemetry')` from the global provider. */
  readonly meter?: Meter | undefined;
  /**
   * Added to every data point (e.g. `{ 'service.name': 'orders' }` when no Resource carries it). Ballast's own keys
   * win on a clash. Keep these constant: they multiply every series.
   */
  readonly attributes?: Attributes | undefined;
}

/** Stops all recording; calling it again does nothing. */
export type InstrumentationDisposer = () => void;

/**
 * Records SPEC §8 metrics for one `Resilience`: counters and the duration histogram from its events (durations are
 * measured on the Resilience clock by the executor), and gauges read from `admin.inspect()` at each collection.
 *
 * The gauges share one batch observable callback that awaits `inspect()` — the OTel JS SDK awaits batch callbacks
 * during `collect()` (bounded by the reader's timeout), so every scrape sees the state as of that scrape, with no
 * one-collection lag. Keys evicted by core, or dropped by a retune, simply stop being observed.
 *
 * Cardinality is `policy × route × (outcome | code | store)`: error messages, attempt numbers and delays never
 * become attributes.
 */
export function instrumentResilience(
  resilience: InstrumentedResilience,
  options: InstrumentResilienceOptions = {},
): InstrumentationDisposer {
  const meter = options.meter ?? metrics.getMeter('@ballast/opentelemetry');
  const attrs = new AttributeTable(options.attributes);

  const calls = meter.createCounter(MetricName.CALLS, {
    description: 'Calls that went through a Ballast policy, by outcome (rejected calls included).',
    unit: '{call}',
    valueType: ValueType.INT,
  });
  const duration = meter.createHistogram(MetricName.CALL_DURATION, {
    description: 'Time from run() to settlement, on the Resilience clock, by outcome.',
    unit: 'ms',
    advice: { explicitBucketBoundaries: [...CALL_DURATION_BUCKETS] },
  });
  const rejections = meter.createCounter(MetricName.REJECTIONS, {
    description: 'Rejections raised by a Ballast strategy, by code.',
    unit: '{rejection}',
    valueType: ValueType.INT,
  });
  const retries = meter.createCounter(MetricName.RETRIES, {
    description: 'Retries scheduled (the first attempt is not a retry).',
    unit: '{retry}',
    valueType: ValueType.INT,
  });
  const storeDegraded = meter.createCounter(MetricName.STORE_DEGRADED, {
    description: 'Store errors a call survived on local state (failOpenOnStoreError), by store.',
    unit: '{error}',
    valueType: ValueType.INT,
  });

  const breakerState = meter.createObservableGauge(MetricName.BREAKER_STATE, {
    description: 'Circuit breaker state: 0 closed, 1 half-open, 2 open.',
    unit: '1',
    valueType: ValueType.INT,
  });
  const bulkheadLimit = meter.createObservableGauge(MetricName.BULKHEAD_LIMIT, {
    description: 'Current bulkhead concurrency limit (moves with AIMD / Gradient2).',
    unit: '{call}',
  });
  const bulkheadInUse = meter.createObservableGauge(MetricName.BULKHEAD_IN_USE, {
    description: 'Calls holding a bulkhead slot.',
    unit: '{call}',
    valueType: ValueType.INT,
  });
  const bulkheadWaiting = meter.createObservableGauge(MetricName.BULKHEAD_WAITING, {
    description: 'Calls parked in the bulkhead queue.',
    unit: '{call}',
    valueType: ValueType.INT,
  });
  const hedgeDelay = meter.createObservableGauge(MetricName.HEDGE_DELAY, {
    description: 'Delay before the next hedged attempt (fixed, or the adaptive quantile once warm).',
    unit: 'ms',
  });
  const throttleProbability = meter.createObservableGauge(MetricName.THROTTLE_REJECTION_PROBABILITY, {
    description: 'Adaptive throttle (Google SRE) client-side rejection probability.',
    unit: '1',
  });

  const onEvent = (event: ResilienceEvent): void => {
    switch (event.type) {
      case 'call': {
        const { policy, route, outcome } = event;
        calls.add(
          1,
          event.code === undefined
            ? attrs.outcome(policy, route, outcome)
            : attrs.outcomeCode(policy, route, outcome, event.code),
        );
        duration.record(event.duration, attrs.outcome(policy, route, outcome));
        return;
      }
      case 'rejected':
        rejections.add(1, attrs.code(event.policy, event.route, event.code));
        return;
      case 'retry':
        retries.add(1, attrs.base(event.policy, event.route));
        return;
      case 'store_degraded':
        storeDegraded.add(1, attrs.store(event.policy, event.route, event.store));
        return;
      default:
        // Other events are covered by the gauges (state) or carry nothing to count.
        return;
    }
  };

  const observe = (result: BatchObservableResult, s: ResilienceStateSnapshot): void => {
    const a = attrs.base(s.policy, s.route);
    if (s.breaker !== undefined) result.observe(breakerState, BreakerStateValue[s.breaker.state], a);
    if (s.concurrencyLimit !== undefined) result.observe(bulkheadLimit, s.concurrencyLimit, a);
    if (s.inUse !== undefined) result.observe(bulkheadInUse, s.inUse, a);
    if (s.waiting !== undefined) result.observe(bulkheadWaiting, s.waiting, a);
    if (s.hedgeDelay !== undefined) result.observe(hedgeDelay, s.hedgeDelay, a);
    if (s.throttleRejectionProbability !== undefined) {
      result.observe(throttleProbability, s.throttleRejectionProbability, a);
    }
  };

  let active = true;
  const observeAll = async (result: BatchObservableResult): Promise<void> => {
    const snapshots = await resilience.admin.inspect();
    // A collection that started before dispose() must not report after it.
    if (!active) return;
    for (const s of snapshots) observe(result, s);
  };
  const gauges: Observable[] = [
    breakerState,
    bulkheadLimit,
    bulkheadInUse,
    bulkheadWaiting,
    hedgeDelay,
    throttleProbability,
  ];

  const unsubscribe = resilience.on(onEvent);
  meter.addBatchObservableCallback(observeAll, gauges);

  return () => {
    if (!active) return;
    active = false;
    unsubscribe();
    meter.removeBatchObservableCallback(observeAll, gauges);
  };
}
