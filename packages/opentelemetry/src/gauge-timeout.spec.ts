import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import {
  BulkheadStrategy,
  CircuitBreakerStrategy,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { instrumentResilience, type InstrumentedResilience } from './instrument-resilience';
import { MetricName } from './metric-names';
import { ManualReader, infraError, key, settle, setupMetrics, valueAt } from './__tests__/metrics-harness';
import { StalledCircuitBreakerStore } from './__tests__/stalled-store';

const ROUTES = Array.from({ length: 20 }, (_, i) => `r${i}`);
/** The bound the tests set: short, so a timed-out collection costs the test suite a few ms of real time. */
const GAUGE_TIMEOUT = 25;
/** How long a test lets a collection run before calling it hung (the bug: it never finished). */
const HUNG = 2_000;

const dbPolicy = () =>
  new ResiliencePolicy({
    name: 'db',
    strategies: [
      new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '10s',
        minThroughput: 2,
        breakDuration: '5s',
      }),
      new BulkheadStrategy({ maxConcurrency: 4 }),
    ],
  });

/** Rejects when `p` has not settled after `ms` of real time; the timer is cleared either way. */
async function finishesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** 20 routes on a breaker store that stalls: one healthy collection first, then every call fails open. */
async function stalledScenario(opts: { healthyFirst: boolean }) {
  const clock = new FakeClock();
  const store = new StalledCircuitBreakerStore(clock);
  const m = setupMetrics([dbPolicy()], {
    clock,
    stores: { circuitBreaker: store },
    instrument: { gaugeTimeout: GAUGE_TIMEOUT },
  });
  if (opts.healthyFirst) {
    for (const route of ROUTES) await m.resilience.run(() => 1, { policy: 'db', route });
    const healthy = await m.points(MetricName.BREAKER_STATE);
    expect(healthy).toEqual(ROUTES.map((r) => ({ attributes: key('db', r), value: 0 })));
  }
  store.stalled = true;
  // Each call waits out the store's command timeout, then runs on local state (store_degraded).
  const calls = ROUTES.map((route) => settle(m.resilience.run(() => 1, { policy: 'db', route })));
  await clock.advance(250);
  expect(calls.every((c) => c.done && c.value === 1)).toBe(true);
  // r0 fails once: its local breaker (1 success, 1 failure ≥ 0.5) opens, and core announces it.
  const failed = settle(m.resilience.run(() => Promise.reject(infraError()), { policy: 'db', route: 'r0' }));
  await clock.advance(250);
  expect(failed.error).toMatchObject({ message: 'boom' });
  return { ...m, store };
}

describe('gauges on a stalled store (gaugeTimeout)', () => {
  it('a collection finishes within the bound and still carries every counter, gauges from local state', async () => {
    const m = await stalledScenario({ healthyFirst: true });
    const inspectsBefore = m.inspectCalls();

    const started = performance.now();
    const metrics = await finishesWithin(m.collect(), HUNG, 'a collection on a stalled store');
    expect(performance.now() - started).toBeLessThan(HUNG);
    // The inspect started and is still waiting on the store: the collection did not wait for it.
    expect(m.inspectCalls()).toBe(inspectsBefore + 1);
    expect(m.store.pending).toBeGreaterThan(0);

    const sums = (name: string) =>
      (metrics.get(name)?.dataPoints ?? []).map((p) => ({
        attributes: p.attributes,
        value: p.value as number,
      }));
    const calls = sums(MetricName.CALLS);
    expect(valueAt(calls, key('db', 'r0', { 'ballast.outcome': 'success' }))).toBe(2);
    expect(
      valueAt(calls, key('db', 'r0', { 'ballast.outcome': 'failure', 'ballast.code': 'infrastructure' })),
    ).toBe(1);
    for (const r of ROUTES.slice(1)) {
      expect(valueAt(calls, key('db', r, { 'ballast.outcome': 'success' }))).toBe(2);
    }
    const degraded = sums(MetricName.STORE_DEGRADED);
    expect(degraded).toHaveLength(ROUTES.length);
    expect(valueAt(degraded, key('db', 'r0', { 'ballast.store': 'circuitBreaker' }))).toBe(2);
    for (const r of ROUTES.slice(1)) {
      expect(valueAt(degraded, key('db', r, { 'ballast.store': 'circuitBreaker' }))).toBe(1);
    }
    expect(metrics.get(MetricName.CALL_DURATION)?.dataPoints.length).toBeGreaterThan(0);

    // Gauges from local state: the last answered inspect, plus the breaker transition this process made since.
    const breaker = sums(MetricName.BREAKER_STATE);
    expect(breaker).toHaveLength(ROUTES.length);
    expect(valueAt(breaker, key('db', 'r0'))).toBe(2);
    for (const r of ROUTES.slice(1)) expect(valueAt(breaker, key('db', r))).toBe(0);
    const limits = sums(MetricName.BULKHEAD_LIMIT);
    expect(limits).toEqual(ROUTES.map((r) => ({ attributes: key('db', r), value: 4 })));

    await m.clock.runAll();
  });

  it('a later collection joins the inspect still in flight instead of piling another on the store', async () => {
    const m = await stalledScenario({ healthyFirst: true });
    const before = m.inspectCalls();
    await finishesWithin(m.collect(), HUNG, 'the first collection');
    const second = await finishesWithin(m.collect(), HUNG, 'the second collection');
    expect(m.inspectCalls()).toBe(before + 1);
    expect(valueAt(await m.points(MetricName.CALLS), key('db', 'r3', { 'ballast.outcome': 'success' }))).toBe(
      2,
    );
    expect(second.get(MetricName.BREAKER_STATE)?.dataPoints).toHaveLength(ROUTES.length);

    // The store recovers: the hung inspect ends (core answers from local state), and the next one is fresh.
    m.store.stalled = false;
    await m.clock.runAll();
    expect(m.store.pending).toBe(0);
    const inUse = await m.points(MetricName.BULKHEAD_IN_USE);
    expect(m.inspectCalls()).toBe(before + 2);
    expect(inUse).toEqual(ROUTES.map((r) => ({ attributes: key('db', r), value: 0 })));
  });

  it('with no inspect ever answered, reports the breaker transitions this process saw', async () => {
    const m = await stalledScenario({ healthyFirst: false });
    const metrics = await finishesWithin(m.collect(), HUNG, 'a collection on a stalled store');
    const breaker = metrics.get(MetricName.BREAKER_STATE)!.dataPoints;
    expect(breaker.map((p) => ({ attributes: p.attributes, value: p.value }))).toEqual([
      { attributes: key('db', 'r0'), value: 2 },
    ]);
    expect(metrics.get(MetricName.CALLS)?.dataPoints.length).toBeGreaterThan(0);
    expect(metrics.get(MetricName.STORE_DEGRADED)?.dataPoints).toHaveLength(ROUTES.length);
    await m.clock.runAll();
  });
});

describe('a failing inspect never fails the collection', () => {
  const wire = (inspect: () => Promise<never>) => {
    const clock = new FakeClock();
    const resilience = new Resilience({ policies: [dbPolicy()], clock });
    const wrapped: InstrumentedResilience = {
      on: resilience.on.bind(resilience),
      admin: { ...resilience.admin, inspect },
    };
    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    instrumentResilience(wrapped, { meter: provider.getMeter('t'), gaugeTimeout: GAUGE_TIMEOUT });
    return { resilience, reader };
  };

  it.each([
    ['rejects', () => Promise.reject(new Error('store down'))],
    [
      'throws synchronously',
      () => {
        throw new Error('store down');
      },
    ],
  ])(
    'when inspect %s, counters are still collected and the callback reports no error',
    async (_, inspect) => {
      const { resilience, reader } = wire(inspect as () => Promise<never>);
      await resilience.run(() => 1, { policy: 'db', route: 'a' });
      for (let i = 0; i < 2; i++) {
        const { resourceMetrics, errors } = await finishesWithin(reader.collect(), HUNG, 'collect');
        expect(errors).toEqual([]);
        const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((x) => x.descriptor.name));
        expect(names).toEqual(expect.arrayContaining([MetricName.CALLS, MetricName.CALL_DURATION]));
      }
    },
  );
});

describe('the bound leaves no timer behind', () => {
  it('clears it when inspect answers in time, spends it when the bound fires, and never holds the process', async () => {
    const live = new Set<NodeJS.Timeout>();
    const created: NodeJS.Timeout[] = [];
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const set = jest.spyOn(globalThis, 'setTimeout').mockImplementation(((cb: () => void, ms?: number) => {
      const handle: NodeJS.Timeout = realSet(() => {
        live.delete(handle);
        cb();
      }, ms);
      live.add(handle);
      created.push(handle);
      return handle;
    }) as typeof setTimeout);
    const clear = jest.spyOn(globalThis, 'clearTimeout').mockImplementation((h) => {
      live.delete(h as NodeJS.Timeout);
      realClear(h);
    });
    try {
      const clock = new FakeClock();
      const store = new StalledCircuitBreakerStore(clock);
      const m = setupMetrics([dbPolicy()], {
        clock,
        stores: { circuitBreaker: store },
        instrument: { gaugeTimeout: GAUGE_TIMEOUT },
      });
      await m.resilience.run(() => 1, { policy: 'db', route: 'a' });
      await m.collect(); // answered in time
      expect(created).toHaveLength(1);
      expect(live.size).toBe(0);

      store.stalled = true;
      await m.collect(); // the bound fires
      expect(created).toHaveLength(2);
      expect(live.size).toBe(0);
      expect(created.every((h) => !h.hasRef())).toBe(true);
      await clock.runAll();
    } finally {
      set.mockRestore();
      clear.mockRestore();
    }
  });
});

describe('an inspect that never settles', () => {
  it('keeps nothing alive per collection that gave up on it (a hung store must not leak one waiter per scrape)', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // Every bound's timer, watched for collection: a collection that gave up must not leave it reachable.
    const collected = { count: 0 };
    let bounds = 0;
    const registry = new FinalizationRegistry<void>(() => void collected.count++);
    const realSet = globalThis.setTimeout;
    const set = jest.spyOn(globalThis, 'setTimeout').mockImplementation(((cb: () => void, ms?: number) => {
      const handle = realSet(cb, ms);
      if (ms === 1) {
        registry.register(handle);
        bounds++;
      }
      return handle;
    }) as typeof setTimeout);
    const resilience = new Resilience({ policies: [dbPolicy()], clock: new FakeClock() });
    let inspects = 0;
    const hung: InstrumentedResilience = {
      on: resilience.on.bind(resilience),
      admin: {
        ...resilience.admin,
        inspect: () => {
          inspects++;
          return new Promise<never>(() => {});
        },
      },
    };
    const reader = new ManualReader();
    const stop = instrumentResilience(hung, {
      meter: new MeterProvider({ readers: [reader] }).getMeter('t'),
      gaugeTimeout: 1,
    });
    const COLLECTIONS = 40;
    try {
      for (let i = 0; i < COLLECTIONS; i++) {
        const { errors } = await finishesWithin(reader.collect(), HUNG, 'collect');
        expect(errors).toEqual([]);
      }
    } finally {
      set.mockRestore();
    }
    expect(inspects).toBe(1);
    expect(bounds).toBe(COLLECTIONS);
    for (let i = 0; i < 10 && collected.count < COLLECTIONS; i++) {
      gc();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // One inspect still hangs, as its store does; what each collection allocated to wait for it is garbage.
    expect(collected.count).toBe(COLLECTIONS);
    stop();
  });
});

describe('gaugeTimeout validation', () => {
  const resilience = new Resilience({ policies: [] });

  it.each([
    [0, 'gaugeTimeout must be a duration > 0'],
    [-5, 'got -5'],
    ['-1s', "got '-1s'"],
    ['250', "got '250'"],
    [Number.POSITIVE_INFINITY, 'got Infinity'],
    [Number.NaN, 'got NaN'],
  ])('rejects %p with a configuration error naming the field, constraint and value', (value, text) => {
    let error: unknown;
    try {
      instrumentResilience(resilience, { gaugeTimeout: value as number });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'configuration' });
    expect((error as Error).message).toContain('gaugeTimeout must be a duration > 0');
    expect((error as Error).message).toContain(text);
  });

  it('reports every violation in one error', () => {
    let error: unknown;
    try {
      instrumentResilience(resilience, { gaugeTimeout: 'soon', attributes: 'service=orders' as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceError);
    const { message, details } = error as ResilienceError;
    expect(message).toMatch(/^Invalid instrumentResilience options: /);
    expect(message).toContain('gaugeTimeout must be a duration > 0');
    expect(message).toContain("got 'soon'");
    expect(message).toContain("attributes must be an object of attribute values, got 'service=orders'");
    expect(details?.['violations']).toEqual([
      expect.objectContaining({ path: 'attributes', value: 'service=orders' }),
      expect.objectContaining({ path: 'gaugeTimeout', value: 'soon' }),
    ]);
  });

  it("accepts a number of ms or a duration string ('50ms', '1.5s')", () => {
    for (const gaugeTimeout of [50, '50ms', '1.5s']) {
      const stop = instrumentResilience(resilience, { gaugeTimeout });
      stop();
    }
  });
});
