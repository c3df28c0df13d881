import { Resilience, type ResiliencePolicy, type ResilienceStores } from '@ballast/core';
import { FakeClock, seededRandom } from '@ballast/testing';
import type { Attributes } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { instrumentResilience, type InstrumentResilienceOptions } from '../instrument-resilience';

/** A pull reader: the test decides when a collection happens, as Prometheus does with a scrape. */
export class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface Point<V = number> {
  readonly attributes: Attributes;
  readonly value: V;
}

/** The real OTel SDK wired to a Resilience on a FakeClock, with helpers that read collected data points. */
export function setupMetrics(
  policies: ResiliencePolicy[],
  opts: {
    /** The Resilience clock; pass one when a store needs it too (default: a fresh FakeClock). */
    clock?: FakeClock;
    stores?: ResilienceStores;
    maxKeysPerPolicy?: number;
    instrument?: Omit<InstrumentResilienceOptions, 'meter'>;
  } = {},
) {
  const clock = opts.clock ?? new FakeClock();
  const resilience = new Resilience({
    policies,
    clock,
    random: seededRandom(7),
    ...(opts.stores ? { stores: opts.stores } : {}),
    ...(opts.maxKeysPerPolicy === undefined ? {} : { maxKeysPerPolicy: opts.maxKeysPerPolicy }),
  });
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter('ballast-test');
  // admin is frozen, so observe inspect() through a wrapper: count calls, and let a test hold one open.
  let inspectCalls = 0;
  let hold: Promise<void> | undefined;
  const observed = {
    on: resilience.on.bind(resilience),
    admin: {
      ...resilience.admin,
      inspect: async (filter?: { policy?: string }) => {
        inspectCalls++;
        const snapshots = await resilience.admin.inspect(filter);
        if (hold !== undefined) await hold;
        return snapshots;
      },
    },
  };
  const dispose = instrumentResilience(observed, { meter, ...opts.instrument });
  /** Makes the next inspect() wait until the returned function is called. */
  const holdInspect = (): (() => void) => {
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    return () => {
      hold = undefined;
      release();
    };
  };

  /** Runs one collection and returns every metric by instrument name. */
  const collect = async (): Promise<Map<string, MetricData>> => {
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    const byName = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const m of scope.metrics) byName.set(m.descriptor.name, m);
    }
    return byName;
  };

  /** Sum / gauge points of one instrument (empty when the instrument reported nothing). */
  const points = async (name: string): Promise<Point[]> => {
    const m = (await collect()).get(name);
    if (m === undefined) return [];
    expect(m.dataPointType).not.toBe(DataPointType.HISTOGRAM);
    return m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value as number }));
  };

  const histogram = async (name: string): Promise<Point<Histogram>[]> => {
    const m = (await collect()).get(name);
    if (m === undefined) return [];
    expect(m.dataPointType).toBe(DataPointType.HISTOGRAM);
    return m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value as Histogram }));
  };

  return {
    clock,
    resilience,
    reader,
    provider,
    meter,
    dispose,
    collect,
    points,
    histogram,
    holdInspect,
    inspectCalls: () => inspectCalls,
  };
}

/** The value of the point whose attributes equal `attributes` exactly, or undefined. */
export function valueAt<V>(points: readonly Point<V>[], attributes: Attributes): V | undefined {
  const want = JSON.stringify(sortKeys(attributes));
  return points.find((p) => JSON.stringify(sortKeys(p.attributes)) === want)?.value;
}

function sortKeys(a: Attributes): Attributes {
  return Object.fromEntries(Object.entries(a).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
}

/** An error the default classifier maps to `infrastructure` (retryable, a breaker failure). */
export const infraError = (msg = 'boom'): Error => Object.assign(new Error(msg), { code: 'ECONNRESET' });

/** Captures how a promise settles without leaving it unhandled. */
export function settle<T>(p: Promise<T>): { done: boolean; value?: T; error?: unknown } {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (v) => {
      state.done = true;
      state.value = v;
    },
    (e: unknown) => {
      state.done = true;
      state.error = e;
    },
  );
  return state;
}

/** `ballast.policy` / `ballast.route` as the instruments write them (route omitted when undefined). */
export function key(policy: string, route?: string, extra: Attributes = {}): Attributes {
  return route === undefined
    ? { 'ballast.policy': policy, ...extra }
    : { 'ballast.policy': policy, 'ballast.route': route, ...extra };
}
