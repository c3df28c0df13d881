import { createNoopMeter } from '@opentelemetry/api';
import {
  BackoffStrategy,
  RateLimitStrategy,
  Resilience,
  ResilienceError,
  ResiliencePolicy,
  RetryStrategy,
  TimeoutStrategy,
  type RateLimitStore,
} from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { instrumentResilience } from './instrument-resilience';
import { CALL_DURATION_BUCKETS, MetricName } from './metric-names';
import { ManualReader, infraError, key, settle, setupMetrics, valueAt } from './__tests__/metrics-harness';

const plain = (name: string) => new ResiliencePolicy({ name, strategies: [] });

describe('ballast.calls and ballast.call.duration', () => {
  it('counts calls by outcome with the failure kind as ballast.code, and times them on the Resilience clock', async () => {
    const m = setupMetrics([plain('orders')]);
    const slow = m.resilience.run(() => m.clock.sleep(120).then(() => 'ok'), {
      policy: 'orders',
      route: 'db',
    });
    await m.clock.advance(120);
    await expect(slow).resolves.toBe('ok');
    await m.resilience.run(() => 1, { policy: 'orders', route: 'db' });
    await expect(
      m.resilience.run(
        () => {
          throw infraError();
        },
        { policy: 'orders', route: 'db' },
      ),
    ).rejects.toThrow('boom');

    const calls = await m.points(MetricName.CALLS);
    expect(calls).toHaveLength(2);
    expect(valueAt(calls, key('orders', 'db', { 'ballast.outcome': 'success' }))).toBe(2);
    expect(
      valueAt(calls, key('orders', 'db', { 'ballast.outcome': 'failure', 'ballast.code': 'infrastructure' })),
    ).toBe(1);

    const metric = (await m.collect()).get(MetricName.CALL_DURATION)!;
    expect(metric.descriptor.unit).toBe('ms');
    const durations = await m.histogram(MetricName.CALL_DURATION);
    const ok = valueAt(durations, key('orders', 'db', { 'ballast.outcome': 'success' }))!;
    expect(ok).toMatchObject({ count: 2, sum: 120, min: 0, max: 120 });
    expect(ok.buckets.boundaries).toEqual([...CALL_DURATION_BUCKETS]);
    const failed = valueAt(durations, key('orders', 'db', { 'ballast.outcome': 'failure' }))!;
    expect(failed).toMatchObject({ count: 1, sum: 0 });
  });

  it('counts cancelled calls (the caller aborted) as outcome cancelled', async () => {
    const m = setupMetrics([plain('p')]);
    const ac = new AbortController();
    const call = settle(m.resilience.run(() => m.clock.sleep(1000), { policy: 'p', signal: ac.signal }));
    await m.clock.advance(30);
    ac.abort(new Error('client went away'));
    await m.clock.advance(0);
    expect(call.done).toBe(true);

    const calls = await m.points(MetricName.CALLS);
    expect(calls.map((p) => p.attributes['ballast.outcome'])).toEqual(['cancelled']);
    const durations = await m.histogram(MetricName.CALL_DURATION);
    expect(valueAt(durations, key('p', undefined, { 'ballast.outcome': 'cancelled' }))).toMatchObject({
      count: 1,
      sum: 30,
    });
    await m.clock.runAll();
  });

  it('keeps cancelled calls in one series without ballast.code, whether the caller aborted before or during the call', async () => {
    const m = setupMetrics([plain('p')]);
    const during = new AbortController();
    const call = settle(m.resilience.run(() => m.clock.sleep(1000), { policy: 'p', signal: during.signal }));
    await m.clock.advance(30);
    during.abort(new Error('client went away'));
    await m.clock.advance(0);
    expect(call.done).toBe(true);
    const before = new AbortController();
    before.abort(new Error('gone already'));
    await expect(m.resilience.run(() => 1, { policy: 'p', signal: before.signal })).rejects.toThrow(
      'gone already',
    );

    expect(await m.points(MetricName.CALLS)).toEqual([
      { attributes: key('p', undefined, { 'ballast.outcome': 'cancelled' }), value: 2 },
    ]);
    await m.clock.runAll();
  });

  it('omits ballast.route (rather than writing an empty value) when the call had no route', async () => {
    const m = setupMetrics([plain('p')]);
    await m.resilience.run(() => 1, { policy: 'p' });
    const [point] = await m.points(MetricName.CALLS);
    expect(point!.attributes).toEqual({ 'ballast.policy': 'p', 'ballast.outcome': 'success' });
    expect(Object.keys(point!.attributes)).not.toContain('ballast.route');
  });

  it('merges the extra attributes into every data point, Ballast keys winning on a clash', async () => {
    const m = setupMetrics([plain('p')], {
      instrument: { attributes: { 'service.name': 'orders-api', 'ballast.policy': 'spoofed' } },
    });
    await m.resilience.run(() => 1, { policy: 'p', route: 'r' });
    const [call] = await m.points(MetricName.CALLS);
    expect(call!.attributes).toEqual({
      'service.name': 'orders-api',
      'ballast.policy': 'p',
      'ballast.route': 'r',
      'ballast.outcome': 'success',
    });
    const [duration] = await m.histogram(MetricName.CALL_DURATION);
    expect(duration!.attributes['service.name']).toBe('orders-api');
  });

  it('never lets an extra attribute stand in for a Ballast key that an instrument leaves out', async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [
        new RetryStrategy({
          maxAttempts: 2,
          backoff: new BackoffStrategy({ base: '10ms', max: '10ms', jitter: 'none' }),
        }),
      ],
    });
    const m = setupMetrics([policy], {
      instrument: {
        attributes: {
          'service.name': 'orders-api',
          'ballast.route': 'spoofed',
          'ballast.outcome': 'spoofed',
          'ballast.code': 'spoofed',
          'ballast.store': 'spoofed',
        },
      },
    });
    let attempts = 0;
    const call = settle(
      m.resilience.run(
        () => {
          if (++attempts === 1) throw infraError();
          return 1;
        },
        { policy: 'p' },
      ),
    );
    await m.clock.advance(10);
    expect(call.value).toBe(1);

    const service = { 'service.name': 'orders-api' };
    expect(await m.points(MetricName.CALLS)).toEqual([
      { attributes: key('p', undefined, { ...service, 'ballast.outcome': 'success' }), value: 1 },
    ]);
    expect(await m.points(MetricName.RETRIES)).toEqual([
      { attributes: key('p', undefined, service), value: 1 },
    ]);
  });
});

describe('ballast.rejections', () => {
  it('counts each rejection by code, and the rejected call in ballast.calls too', async () => {
    const policy = new ResiliencePolicy({
      name: 'api',
      strategies: [new RateLimitStrategy({ permits: 1, per: '1s' })],
    });
    const m = setupMetrics([policy]);
    await m.resilience.run(() => 1, { policy: 'api', route: 'r' });
    await expect(m.resilience.run(() => 1, { policy: 'api', route: 'r' })).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(m.resilience.run(() => 1, { policy: 'api', route: 'r' })).rejects.toBeInstanceOf(
      ResilienceError,
    );

    const rejections = await m.points(MetricName.REJECTIONS);
    expect(rejections).toEqual([
      { attributes: key('api', 'r', { 'ballast.code': 'rate_limited' }), value: 2 },
    ]);
    const calls = await m.points(MetricName.CALLS);
    expect(
      valueAt(calls, key('api', 'r', { 'ballast.outcome': 'rejected', 'ballast.code': 'rate_limited' })),
    ).toBe(2);
    expect(valueAt(calls, key('api', 'r', { 'ballast.outcome': 'success' }))).toBe(1);
  });

  it('counts forced-open rejections (raised before any strategy)', async () => {
    const m = setupMetrics([plain('p')]);
    await m.resilience.admin.forceOpen('p');
    await expect(m.resilience.run(() => 1, { policy: 'p', route: 'x' })).rejects.toMatchObject({
      code: 'resilience_forced_open',
    });
    expect(await m.points(MetricName.REJECTIONS)).toEqual([
      { attributes: key('p', 'x', { 'ballast.code': 'resilience_forced_open' }), value: 1 },
    ]);
  });
});

describe('ballast.retries', () => {
  it('counts every retry, not the first attempt', async () => {
    const policy = new ResiliencePolicy({
      name: 'flaky',
      strategies: [
        new RetryStrategy({
          maxAttempts: 4,
          backoff: new BackoffStrategy({ base: '10ms', max: '1s', jitter: 'none' }),
        }),
        new TimeoutStrategy({ timeout: '1s' }),
      ],
    });
    const m = setupMetrics([policy]);
    let attempts = 0;
    const call = settle(
      m.resilience.run(
        () => {
          attempts++;
          if (attempts < 3) throw infraError();
          return 'third time';
        },
        { policy: 'flaky', route: 'svc' },
      ),
    );
    await m.clock.advance(1000);
    expect(call.value).toBe('third time');
    expect(await m.points(MetricName.RETRIES)).toEqual([{ attributes: key('flaky', 'svc'), value: 2 }]);
    const durations = await m.histogram(MetricName.CALL_DURATION);
    // 10 ms then 20 ms of backoff: the duration covers the whole logical call.
    expect(valueAt(durations, key('flaky', 'svc', { 'ballast.outcome': 'success' }))).toMatchObject({
      count: 1,
      sum: 30,
    });
  });
});

describe('ballast.store.degraded', () => {
  it('counts store errors survived on local state, by store', async () => {
    const failing: RateLimitStore = {
      take: () => Promise.reject(new Error('redis down')),
      tokens: () => Promise.reject(new Error('redis down')),
      reset: () => Promise.reject(new Error('redis down')),
    };
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [new RateLimitStrategy({ permits: 100, per: '1s' })],
    });
    const m = setupMetrics([policy], { stores: { rateLimit: failing } });
    await m.resilience.run(() => 1, { policy: 'p', route: 'r' });
    await m.resilience.run(() => 1, { policy: 'p', route: 'r' });
    expect(await m.points(MetricName.STORE_DEGRADED)).toEqual([
      { attributes: key('p', 'r', { 'ballast.store': 'rateLimit' }), value: 2 },
    ]);
    expect(await m.points(MetricName.CALLS)).toEqual([
      { attributes: key('p', 'r', { 'ballast.outcome': 'success' }), value: 2 },
    ]);
  });
});

describe('lifecycle', () => {
  it('the disposer stops all recording and is idempotent', async () => {
    const m = setupMetrics([plain('p')]);
    await m.resilience.run(() => 1, { policy: 'p' });
    m.dispose();
    m.dispose();
    await m.resilience.run(() => 1, { policy: 'p' });
    await expect(m.resilience.run(() => Promise.reject(infraError()), { policy: 'p' })).rejects.toThrow();
    expect(await m.points(MetricName.CALLS)).toEqual([
      { attributes: key('p', undefined, { 'ballast.outcome': 'success' }), value: 1 },
    ]);
  });

  it('refuses a second live instrumentation on the same meter rather than count every call twice', async () => {
    const resilience = new Resilience({ policies: [plain('p')], clock: new FakeClock() });
    const reader = new ManualReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('ballast-test');
    const successes = async (): Promise<number | undefined> => {
      const { resourceMetrics, errors } = await reader.collect();
      expect(errors).toEqual([]);
      const calls = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .find((x) => x.descriptor.name === MetricName.CALLS);
      return calls?.dataPoints.find((p) => p.attributes['ballast.outcome'] === 'success')?.value as number;
    };

    const first = instrumentResilience(resilience, { meter });
    let error: unknown;
    try {
      instrumentResilience(resilience, { meter });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'configuration' });
    expect((error as Error).message).toContain('already instrumented on this meter');
    await resilience.run(() => 1, { policy: 'p' });
    expect(await successes()).toBe(1);

    // Once disposed, the same meter may be instrumented again; another meter never conflicts.
    first();
    const again = instrumentResilience(resilience, { meter });
    const other = instrumentResilience(resilience, { meter: new MeterProvider().getMeter('other') });
    await resilience.run(() => 1, { policy: 'p' });
    expect(await successes()).toBe(2);
    again();
    other();
  });

  it('lets the no-op meter (no SDK registered yet) be used twice: nothing is recorded, so nothing doubles', () => {
    const resilience = new Resilience({ policies: [plain('p')], clock: new FakeClock() });
    const noop = createNoopMeter();
    const first = instrumentResilience(resilience, { meter: noop });
    const second = instrumentResilience(resilience, { meter: noop });
    expect(typeof second).toBe('function');
    first();
    second();
  });

  it('a live retune keeps the subscription and the series continuous (peers §5 item 24)', async () => {
    const m = setupMetrics([plain('p')]);
    await m.resilience.run(() => 1, { policy: 'p', route: 'r' });
    await m.resilience.admin.retune(
      new ResiliencePolicy({ name: 'p', strategies: [new RateLimitStrategy({ permits: 1, per: '1m' })] }),
    );
    await m.resilience.run(() => 1, { policy: 'p', route: 'r' });
    await expect(m.resilience.run(() => 1, { policy: 'p', route: 'r' })).rejects.toMatchObject({
      code: 'rate_limited',
    });
    const calls = await m.points(MetricName.CALLS);
    expect(valueAt(calls, key('p', 'r', { 'ballast.outcome': 'success' }))).toBe(2);
    expect(await m.points(MetricName.REJECTIONS)).toHaveLength(1);
  });

  it('keeps cardinality at policy × route × outcome/code however many calls run', async () => {
    const m = setupMetrics([plain('p')]);
    for (let i = 0; i < 500; i++) {
      await m.resilience.run(() => i, { policy: 'p', route: i % 2 === 0 ? 'even' : 'odd' });
      await expect(
        m.resilience.run(
          () => {
            throw new Error(`message ${i} must not become an attribute`);
          },
          { policy: 'p', route: 'even' },
        ),
      ).rejects.toThrow();
    }
    const calls = await m.points(MetricName.CALLS);
    expect(
      calls.map((p) => p.attributes).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ).toEqual([
      key('p', 'even', { 'ballast.outcome': 'failure', 'ballast.code': 'internal' }),
      key('p', 'even', { 'ballast.outcome': 'success' }),
      key('p', 'odd', { 'ballast.outcome': 'success' }),
    ]);
    expect(calls.reduce((n, p) => n + p.value, 0)).toBe(1000);
  });
});
