import type { ResilienceAdmin, ResilienceEvent, ResilienceStateSnapshot } from '@ballast/core';
import { diag, ValueType, type BatchObservableResult, type Meter, type Observable } from '@opentelemetry/api';
import type { AttributeTable } from './attribute-table';
import { LocalGaugeState } from './local-gauge-state';
import { BreakerStateValue, MetricName } from './metric-names';

type Snapshots = readonly ResilienceStateSnapshot[];
type Waiter = (snapshots: Snapshots | undefined) => void;

/** The six state gauges of SPEC §8 and the control plane's overrides gauge (SPEC §14.1), fed by one batch callback. */
export interface StateGauges {
  /** Feeds the local fallback (breaker transitions, adaptive limits). */
  onEvent(event: ResilienceEvent): void;
  /** Removes the batch callback; a collection already waiting observes nothing more. */
  dispose(): void;
}

/**
 * Creates the gauges and registers their batch callback, which reads `admin.inspect()` for at most `timeoutMs` per
 * collection and otherwise observes {@link LocalGaugeState}.
 *
 * The callback never rejects and never outlives the bound: a slow or failing store costs the gauges their freshness
 * for one collection, never the counters and histograms collected with them (a scrape that exceeds the scraper's
 * timeout loses every series). At most one `inspect()` runs at a time: a collection that finds one still in flight
 * (a hung store) waits for that one, within its own bound, instead of stacking another on the store. An answer that
 * arrives after the bound still refreshes the local state.
 */
export function createStateGauges(
  meter: Meter,
  attrs: AttributeTable,
  admin: Pick<ResilienceAdmin, 'inspect'>,
  timeoutMs: number,
): StateGauges {
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
  const controlOverrides = meter.createObservableGauge(MetricName.CONTROL_OVERRIDES, {
    description:
      'Standing operator overrides on this replica, per policy: keys forced open (a policy-wide force-open counts each key it refuses), plus 1 when the policy runs a fleet retune (version > 0).',
    unit: '{override}',
    valueType: ValueType.INT,
  });
  const gauges: Observable[] = [
    controlOverrides,
    breakerState,
    bulkheadLimit,
    bulkheadInUse,
    bulkheadWaiting,
    hedgeDelay,
    throttleProbability,
  ];

  const local = new LocalGaugeState();
  let active = true;
  /** The collections waiting for the inspect in flight; `undefined` when none runs. */
  let waiters: Set<Waiter> | undefined;
  let degraded = false;

  const observeSnapshot = (result: BatchObservableResult, s: ResilienceStateSnapshot): void => {
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

  /** One series per policy that has state: how many overrides stand on it here (0 when none). */
  const observeOverrides = (result: BatchObservableResult, snapshots: Snapshots): void => {
    const perPolicy = new Map<string, number>();
    for (const s of snapshots) {
      const base = perPolicy.get(s.policy) ?? (s.version > 0 ? 1 : 0);
      perPolicy.set(s.policy, base + (s.forcedOpen ? 1 : 0));
    }
    for (const [policy, n] of perPolicy) result.observe(controlOverrides, n, attrs.base(policy, undefined));
  };

  const observeLocal = (result: BatchObservableResult): void => {
    local.forEach((policy, route, k) => {
      if (k.breaker === undefined && k.concurrencyLimit === undefined) return;
      const a = attrs.base(policy, route);
      if (k.breaker !== undefined) result.observe(breakerState, BreakerStateValue[k.breaker], a);
      if (k.concurrencyLimit !== undefined) result.observe(bulkheadLimit, k.concurrencyLimit, a);
    });
  };

  /** Starts one inspect; its answer goes to every collection still waiting when it settles. Never rejects. */
  const startInspect = (waiting: Set<Waiter>): void => {
    const mark = local.mark();
    void (async (): Promise<void> => {
      let snapshots: Snapshots | undefined;
      try {
        snapshots = await admin.inspect();
        if (active) local.apply(snapshots, mark);
      } catch (error) {
        diag.warn('@ballast/opentelemetry: admin.inspect() failed; gauges report local state', error);
        snapshots = undefined;
      }
      if (waiters === waiting) waiters = undefined;
      for (const waiter of waiting) waiter(snapshots);
    })();
  };

  /**
   * The answer of the inspect in flight (starting one when none runs), or `undefined` once `timeoutMs` of real time
   * have passed (the bound is about the collection's wall time, not the Resilience clock). The timer is cleared as
   * soon as the inspect settles, and `unref`'d so it never holds the process. A collection that gives up takes its
   * waiter back: an inspect that never settles must not keep one per collection alive.
   */
  const read = (): Promise<Snapshots | undefined> =>
    new Promise<Snapshots | undefined>((resolve) => {
      const starting = waiters === undefined;
      const waiting = (waiters ??= new Set());
      const timer = setTimeout(() => {
        waiting.delete(waiter);
        resolve(undefined);
      }, timeoutMs);
      (timer as { unref?: () => void }).unref?.();
      const waiter: Waiter = (snapshots) => {
        clearTimeout(timer);
        resolve(snapshots);
      };
      waiting.add(waiter);
      if (starting) startInspect(waiting);
    });

  const observeAll = async (result: BatchObservableResult): Promise<void> => {
    try {
      const snapshots = await read();
      // A collection that started before dispose() must not report after it.
      if (!active) return;
      if (snapshots !== undefined) {
        if (degraded) diag.info('@ballast/opentelemetry: admin.inspect() answers in time again');
        degraded = false;
        for (const s of snapshots) observeSnapshot(result, s);
        observeOverrides(result, snapshots);
        return;
      }
      if (!degraded) {
        diag.warn(
          `@ballast/opentelemetry: admin.inspect() gave no answer within ${timeoutMs} ms (gaugeTimeout); ` +
            'ballast.breaker.state and ballast.bulkhead.limit report local state, the other gauges skip this collection',
        );
      }
      degraded = true;
      observeLocal(result);
    } catch (error) {
      // Never reject: the SDK would report it as a collection error.
      diag.error('@ballast/opentelemetry: observing the gauges failed', error);
    }
  };

  meter.addBatchObservableCallback(observeAll, gauges);

  return {
    onEvent: (event) => local.onEvent(event),
    dispose: () => {
      if (!active) return;
      active = false;
      meter.removeBatchObservableCallback(observeAll, gauges);
    },
  };
}
