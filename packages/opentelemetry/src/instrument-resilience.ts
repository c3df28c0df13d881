import {
  EXCEPTION_KINDS,
  ErrorCode,
  ResilienceError,
  type Resilience,
  type ResilienceEvent,
} from '@ballast/core';
import { ValueType, createNoopMeter, type Meter } from '@opentelemetry/api';
import { AttributeTable } from './attribute-table';
import { createStateGauges } from './gauges';
import { AttributeKey, CALL_DURATION_BUCKETS, MetricName } from './metric-names';
import { resolveInstrumentOptions, type InstrumentResilienceOptions } from './options';

export type { InstrumentResilienceOptions } from './options';

/** The slice of `Resilience` this package needs: its events and its control plane's `inspect`. */
export type InstrumentedResilience = Pick<Resilience, 'on' | 'admin'>;

/** Stops all recording; calling it again does nothing. */
export type InstrumentationDisposer = () => void;

/**
 * The meters each `Resilience` is instrumented on right now. A second instrumentation on the same meter would find the
 * same instruments (the SDK hands back the existing storage for an identical name) and count every event twice.
 */
const liveInstrumentations = new WeakMap<InstrumentedResilience, WeakSet<Meter>>();

/**
 * The values `ballast.code` may take on `ballast.calls`: Ballast's own codes and the error kinds. A `ResilienceError`
 * the application throws carries whatever `code` it was given (an order id, a message), which would make one series
 * per value; such a failure is counted without `ballast.code`.
 */
const KNOWN_CODES: ReadonlySet<string> = new Set<string>([...Object.values(ErrorCode), ...EXCEPTION_KINDS]);

const stopNothing: InstrumentationDisposer = () => {};

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
 * Throws a `configuration` `ResilienceError` naming every invalid option, or when this `Resilience` is already
 * instrumented on this meter and that instrumentation was not disposed (it would double every count).
 */
export function instrumentResilience(
  resilience: InstrumentedResilience,
  options: InstrumentResilienceOptions = {},
): InstrumentationDisposer {
  const { meter, attributes, gaugeTimeout } = resolveInstrumentOptions(options, resilience);
  // The API's no-op meter (what `metrics.getMeter()` answers before an SDK is registered, and a shut-down
  // MeterProvider hands out) records nothing, and never will: subscribing would only make core build every event of
  // every call for nobody (SPEC §5: nothing is allocated while nobody listens).
  if (meter === createNoopMeter()) return stopNothing;
  let meters = liveInstrumentations.get(resilience);
  if (meters?.has(meter)) {
    throw new ResilienceError({
      kind: 'configuration',
      message:
        'instrumentResilience: this Resilience is already instrumented on this meter, and a second instrumentation ' +
        'would count every call twice; call the first disposer before instrumenting again, or pass another meter',
    });
  }
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

  const controlApplied = meter.createCounter(MetricName.CONTROL_APPLIED, {
    description: 'Operator changes this replica applied (SPEC §14.1), by action and scope (fleet or local).',
    unit: '{change}',
    valueType: ValueType.INT,
  });

  const chaosInjected = meter.createCounter(MetricName.CHAOS_INJECTED, {
    description:
      'Faults, latency and outcomes a chaos strategy injected into attempts (SPEC §14.3), by injection.',
    unit: '{injection}',
    valueType: ValueType.INT,
  });

  const gauges = createStateGauges(meter, attrs, resilience.admin, gaugeTimeout);

  const onEvent = (event: ResilienceEvent): void => {
    switch (event.type) {
      case 'call': {
        const { policy, route, outcome, code } = event;
        // `ballast.code` only where it names why a call did not succeed: a `cancelled` series must not split by
        // whatever reason a caller aborted with (core sends no code there; an older core did, mid-flight).
        calls.add(
          1,
          code === undefined || (outcome !== 'failure' && outcome !== 'rejected') || !KNOWN_CODES.has(code)
            ? attrs.outcome(policy, route, outcome)
            : attrs.outcomeCode(policy, route, outcome, code),
        );
        duration.record(event.duration, attrs.outcome(policy, route, outcome));
        return;
      }
      case 'rejected':
        // Shadow mode (SPEC §14.3): what would have been refused, a series of its own (rare: a rollout's watch).
        rejections.add(
          1,
          event.shadow === true
            ? { ...attrs.code(event.policy, event.route, event.code), [AttributeKey.SHADOW]: true }
            : attrs.code(event.policy, event.route, event.code),
        );
        return;
      case 'retry':
        retries.add(
          1,
          event.shadow === true
            ? { ...attrs.base(event.policy, event.route), [AttributeKey.SHADOW]: true }
            : attrs.base(event.policy, event.route),
        );
        return;
      case 'store_degraded':
        storeDegraded.add(1, attrs.store(event.policy, event.route, event.store));
        return;
      case 'control_applied':
        // Rare (operator actions): attributes built per event, not cached.
        controlApplied.add(1, {
          ...attrs.base(event.policy, event.route),
          [AttributeKey.ACTION]: event.action,
          [AttributeKey.SCOPE]: event.scope,
        });
        return;
      case 'chaos_injected':
        // Only while an experiment runs: attributes built per event, not cached.
        chaosInjected.add(1, {
          ...attrs.base(event.policy, event.route),
          [AttributeKey.INJECTION]: event.injection,
          ...(event.shadow === true ? { [AttributeKey.SHADOW]: true } : {}),
        });
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

  let unsubscribe: () => void;
  try {
    unsubscribe = resilience.on(onEvent);
  } catch (error) {
    gauges.dispose();
    throw error;
  }
  if (meters === undefined) liveInstrumentations.set(resilience, (meters = new WeakSet()));
  meters.add(meter);

  let active = true;
  return () => {
    if (!active) return;
    active = false;
    unsubscribe();
    gauges.dispose();
    meters?.delete(meter);
  };
}
