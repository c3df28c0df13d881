import {
  AdaptiveThrottleStrategy,
  BulkheadStrategy,
  CircuitBreakerStrategy,
  HedgeStrategy,
  ResiliencePolicy,
} from '@ballast/core';
import { flushMicrotasks } from '@ballast/testing';
import { MetricName } from './metric-names';
import { infraError, key, settle, setupMetrics, valueAt } from './__tests__/metrics-harness';

const fail = () => Promise.reject(infraError());

describe('ballast.breaker.state', () => {
  it('reads 0 closed, 2 open, 1 half-open once the break is over and while a probe runs, 0 closed again', async () => {
    const policy = new ResiliencePolicy({
      name: 'db',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 0.5,
          samplingWindow: '10s',
          minThroughput: 2,
          breakDuration: '5s',
        }),
      ],
    });
    const m = setupMetrics([policy]);
    await m.resilience.run(() => 1, { policy: 'db', route: 'orders' });
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 0 }]);

    await expect(m.resilience.run(fail, { policy: 'db', route: 'orders' })).rejects.toThrow();
    await expect(m.resilience.run(fail, { policy: 'db', route: 'orders' })).rejects.toThrow();
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 2 }]);
    await expect(m.resilience.run(() => 1, { policy: 'db', route: 'orders' })).rejects.toMatchObject({
      code: 'circuit_open',
    });

    // Still open just before the break ends; once it is over, inspect reads half-open (what the next call finds).
    await m.clock.advance(4999);
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 2 }]);
    await m.clock.advance(1);
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 1 }]);
    const probe = settle(m.resilience.run(() => m.clock.sleep(50), { policy: 'db', route: 'orders' }));
    await m.clock.advance(0);
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 1 }]);

    await m.clock.advance(50);
    expect(probe.done).toBe(true);
    expect(await m.points(MetricName.BREAKER_STATE)).toEqual([{ attributes: key('db', 'orders'), value: 0 }]);
    const metric = (await m.collect()).get(MetricName.BREAKER_STATE)!;
    expect(metric.descriptor).toMatchObject({ name: 'ballast.breaker.state', unit: '1' });
  });

  it('reports only policies that have a breaker, one series per route', async () => {
    const breaker = new ResiliencePolicy({
      name: 'b',
      strategies: [
        new CircuitBreakerStrategy({
          failureRatio: 1,
          samplingWindow: '1s',
          minThroughput: 1,
          breakDuration: '1s',
        }),
      ],
    });
    const m = setupMetrics([breaker, new ResiliencePolicy({ name: 'plain', strategies: [] })]);
    await m.resilience.run(() => 1, { policy: 'b', route: 'x' });
    await m.resilience.run(() => 1, { policy: 'b' });
    await m.resilience.run(() => 1, { policy: 'plain', route: 'x' });
    const points = await m.points(MetricName.BREAKER_STATE);
    expect(points.map((p) => p.attributes)).toEqual(expect.arrayContaining([key('b', 'x'), key('b')]));
    expect(points).toHaveLength(2);
  });
});

describe('bulkhead gauges', () => {
  it('report limit, in-use and waiting as calls park and drain', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 2, maxQueue: 3 })],
    });
    const m = setupMetrics([policy]);
    const calls = [100, 100, 100].map((ms) =>
      settle(m.resilience.run(() => m.clock.sleep(ms), { policy: 'pool', route: 'r' })),
    );
    await m.clock.advance(0);
    const a = key('pool', 'r');
    expect(valueAt(await m.points(MetricName.BULKHEAD_LIMIT), a)).toBe(2);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), a)).toBe(2);
    expect(valueAt(await m.points(MetricName.BULKHEAD_WAITING), a)).toBe(1);

    await m.clock.advance(100);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), a)).toBe(1);
    expect(valueAt(await m.points(MetricName.BULKHEAD_WAITING), a)).toBe(0);

    await m.clock.advance(100);
    expect(calls.every((c) => c.done)).toBe(true);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), a)).toBe(0);
  });
});

describe('ballast.hedge.delay', () => {
  it('reports the fixed delay, then the adaptive quantile once warm (ms)', async () => {
    const policy = new ResiliencePolicy({
      name: 'read',
      strategies: [],
      hedge: new HedgeStrategy({
        delay: '200ms',
        maxAttempts: 2,
        adaptiveDelayQuantile: 0.5,
        delayMin: '10ms',
        delayMax: '1s',
      }),
    });
    const m = setupMetrics([policy]);
    const once = async () => {
      const call = settle(m.resilience.run(() => m.clock.sleep(40), { policy: 'read', route: 'r' }));
      await m.clock.advance(40);
      expect(call.done).toBe(true);
    };
    await once();
    expect(await m.points(MetricName.HEDGE_DELAY)).toEqual([{ attributes: key('read', 'r'), value: 200 }]);
    for (let i = 0; i < 20; i++) await once();
    expect(await m.points(MetricName.HEDGE_DELAY)).toEqual([{ attributes: key('read', 'r'), value: 40 }]);
    expect((await m.collect()).get(MetricName.HEDGE_DELAY)!.descriptor.unit).toBe('ms');
  });
});

describe('ballast.throttle.rejection_probability', () => {
  it('rises as the backend fails and equals what admin.inspect reports', async () => {
    const policy = new ResiliencePolicy({
      name: 'upstream',
      strategies: [new AdaptiveThrottleStrategy({ k: 1, minThroughput: 4 })],
    });
    const m = setupMetrics([policy]);
    await m.resilience.run(() => 1, { policy: 'upstream' });
    expect(await m.points(MetricName.THROTTLE_REJECTION_PROBABILITY)).toEqual([
      { attributes: key('upstream'), value: 0 },
    ]);
    for (let i = 0; i < 10; i++) {
      await expect(m.resilience.run(fail, { policy: 'upstream' })).rejects.toThrow();
    }
    const [snapshot] = await m.resilience.admin.inspect({ policy: 'upstream' });
    const [point] = await m.points(MetricName.THROTTLE_REJECTION_PROBABILITY);
    expect(point!.value).toBeGreaterThan(0.5);
    expect(point!.value).toBe(snapshot!.throttleRejectionProbability);
  });
});

describe('observation timing and lifecycle', () => {
  it('awaits admin.inspect inside the collection: a scrape sees the state as of that scrape (no lag)', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 5 })],
    });
    const m = setupMetrics([policy]);
    const running = settle(m.resilience.run(() => m.clock.sleep(10), { policy: 'pool' }));
    await m.clock.advance(0);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), key('pool'))).toBe(1);
    await m.clock.advance(10);
    expect(running.done).toBe(true);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), key('pool'))).toBe(0);
    // One inspect per collection, shared by all six gauges.
    expect(m.inspectCalls()).toBe(2);
  });

  it('stops observing gauges after dispose, including a collection already awaiting inspect', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 5 })],
    });
    const m = setupMetrics([policy]);
    await m.resilience.run(() => 1, { policy: 'pool' });

    const release = m.holdInspect();
    const pending = m.collect();
    while (m.inspectCalls() < 1) await flushMicrotasks();
    m.dispose();
    release();
    const during = await pending;
    expect(during.get(MetricName.BULKHEAD_LIMIT)?.dataPoints ?? []).toEqual([]);

    const after = await m.collect();
    expect(m.inspectCalls()).toBe(1);
    expect(after.get(MetricName.BULKHEAD_LIMIT)?.dataPoints ?? []).toEqual([]);
  });

  it('never refreshes a gauge after dispose (the JS SDK may repeat its last cumulative value)', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 5 })],
    });
    const m = setupMetrics([policy]);
    const running = settle(m.resilience.run(() => m.clock.sleep(10), { policy: 'pool' }));
    await m.clock.advance(0);
    expect(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), key('pool'))).toBe(1);
    m.dispose();
    await m.clock.advance(10);
    expect(running.done).toBe(true);
    const calls = m.inspectCalls();
    // sdk-metrics 2.x merges cumulative async points with the previous collection, so a series it saw once is
    // repeated frozen; a spec-conforming SDK drops it. Either way the fresh value (0) is never observed.
    expect([undefined, 1]).toContain(valueAt(await m.points(MetricName.BULKHEAD_IN_USE), key('pool')));
    expect(m.inspectCalls()).toBe(calls);
  });

  it('forgets routes core evicted: gauges only report keys inspect still knows (peers §5 item 7)', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 5 })],
    });
    const m = setupMetrics([policy], { maxKeysPerPolicy: 2 });
    for (const route of ['a', 'b']) await m.resilience.run(() => 1, { policy: 'pool', route });
    expect((await m.points(MetricName.BULKHEAD_LIMIT)).map((p) => p.attributes)).toEqual([
      key('pool', 'a'),
      key('pool', 'b'),
    ]);
    // Idle keys are evicted least-recently-used first once a third route arrives.
    for (const route of ['c', 'd']) await m.resilience.run(() => 1, { policy: 'pool', route });
    const routes = (await m.resilience.admin.inspect({ policy: 'pool' })).map((s) => s.route);
    expect(routes).toHaveLength(2);
    const live = (await m.points(MetricName.BULKHEAD_LIMIT)).filter((p) =>
      routes.includes(p.attributes['ballast.route'] as string),
    );
    expect(live.map((p) => p.attributes['ballast.route']).sort()).toEqual([...routes].sort());
  });

  it('after a retune, every route seen still reports, with the new limit', async () => {
    const policy = new ResiliencePolicy({
      name: 'pool',
      strategies: [new BulkheadStrategy({ maxConcurrency: 5 })],
    });
    const m = setupMetrics([policy]);
    for (const route of ['a', 'b', 'c']) await m.resilience.run(() => 1, { policy: 'pool', route });
    await m.resilience.admin.retune(
      new ResiliencePolicy({ name: 'pool', strategies: [new BulkheadStrategy({ maxConcurrency: 7 })] }),
    );
    expect(await m.points(MetricName.BULKHEAD_LIMIT)).toEqual(
      ['a', 'b', 'c'].map((r) => ({ attributes: key('pool', r), value: 7 })),
    );
  });
});
