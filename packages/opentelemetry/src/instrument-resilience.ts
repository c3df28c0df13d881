import type { Resilience, ResilienceEvent } from '@ballast/core';
import { ValueType } from '@opentelemetry/api';
import { AttributeTable } from './attribute-table';
import { createStateGauges } from './gauges';
import { CALL_DURATION_BUCKETS, MetricName } from './metric-names';
import { resolveInstrumentOptions, type InstrumentResilienceOptions } from './options';

export type { InstrumentResilienceOptions } from './options';

/** The slice of `Resilience` this package needs: its events and its control plane's `inspect`. */
export type InstrumentedResilience = Pick<Resilience, 'on' | 'admin'>;

/** Stops all recording; calling it again does nothing. */
export type InstrumentationDisposer = () => void;

/**
 * Records SPEC §8 metrics for one `Resilience`: counters and the duration histogram from its events (durations are
 * measured on the Resilience clock by the executor), and gauges read from `admin.inspect()` at each collection.
 *
 * The gauges share one batch observable callback (see `gauges.ts`) that awaits `inspect()` for at most
 * `gaugeTimeout`: the OTel JS SDK awaits batch callbacks during `collect()`, so a scrape sees the state as of that
 * scrape, with no one-collection lag. When a store is slow or down, the gauges report local state instead, and the
 * counters and histograms are never held back. Keys evicted by core, or dropped by a retune, simply stop being
 * observed.
 *
 * Cardinality is `policy × route × (outcome | code | store)`: error messages, attempt numbers and delays never
 * become attributes.
 *
 * Throws a `configuration` `ResilienceError` naming every invalid option.
 */
export function instrumentResilience(
  resilience: InstrumentedResilience,
  options: InstrumentResilienceOptions = {},
): InstrumentationDisposer {
  const { meter, attributes, gaugeTimeout } = resolveInstrumentOptions(options);
  const attrs = new AttributeTable(attributes);

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

  const gauges = createStateGauges(meter, attrs, resilience.admin, gaugeTimeout);

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
      case 'breaker_state':
      case 'bulkhead_limit':
        // State the gauges read from inspect(); kept locally for when inspect does not answer in time.
        gauges.onEvent(event);
        return;
      default:
        // Other events are covered by the gauges (state) or carry nothing to count.
        return;
    }
  };

  const unsubscribe = resilience.on(onEvent);

  let active = true;
  return () => {
    if (!active) return;
    active = false;
    unsubscribe();
    gauges.dispose();
  };
}
