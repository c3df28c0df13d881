import { Resilience, ResilienceError, ResiliencePolicy, TimeoutStrategy } from '@ballast/core';
import { FakeClock } from '@ballast/testing';
import { createNoopMeter, type Meter } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { AttributeKey, MetricName } from './metric-names';
import { instrumentResilience, type InstrumentedResilience } from './instrument-resilience';
import { ManualReader, key, settle, setupMetrics } from './__tests__/metrics-harness';

const plain = (name: string) => new ResiliencePolicy({ name, strategies: [] });

/** A Resilience whose `on` counts subscriptions: every live subscription makes core build every event. */
function countingResilience() {
  const resilience = new Resilience({ policies: [plain('p')], clock: new FakeClock() });
  let subscriptions = 0;
  const observed: InstrumentedResilience = {
    on: (listener) => {
      subscriptions++;
      return resilience.on(listener);
    },
    admin: resilience.admin,
  };
  return { observed, subscriptions: () => subscriptions };
}

describe('ballast.code stays a bounded set', () => {
  it('never turns the code of a ResilienceError the application throws into a series', async () => {
    const m = setupMetrics([plain('p')]);
    for (let i = 0; i < 50; i++) {
      const failing = m.resilience.run(
        () => {
          throw new ResilienceError({ kind: 'not_found', code: `order_${i}_missing` });
        },
        { policy: 'p', route: 'r' },
      );
      await expect(failing).rejects.toMatchObject({ code: `order_${i}_missing` });
    }
    // One series, named by the errors' kind (core names a failure by Ballast's code or by its kind).
    const calls = await m.points(MetricName.CALLS);
    expect(calls).toEqual([
      {
        attributes: key('p', 'r', { 'ballast.outcome': 'failure', 'ballast.code': 'not_found' }),
        value: 50,
      },
    ]);
  });

  it("keeps Ballast's own failure codes and the error kinds", async () => {
    const policy = new ResiliencePolicy({
      name: 'p',
      strategies: [new TimeoutStrategy({ timeout: '10ms' })],
    });
    const m = setupMetrics([policy]);
    const slow = settle(m.resilience.run(() => m.clock.sleep(100), { policy: 'p' }));
    await m.clock.advance(10);
    expect(slow.error).toMatchObject({ code: 'attempt_timeout' });
    await expect(
      m.resilience.run(
        () => {
          throw new ResilienceError({ kind: 'conflict' });
        },
        { policy: 'p' },
      ),
    ).rejects.toMatchObject({ code: 'conflict' });
    const codes = (await m.points(MetricName.CALLS)).map((p) => p.attributes[AttributeKey.CODE]).sort();
    expect(codes).toEqual(['attempt_timeout', 'conflict']);
    await m.clock.runAll();
  });
});

describe('cost when nothing is recorded', () => {
  it.each<[string, () => Meter | undefined]>([
    ['the no-op meter', () => createNoopMeter()],
    ['the default meter while no SDK is registered', () => undefined],
    [
      'a meter asked of a MeterProvider already shut down',
      () => {
        const provider = new MeterProvider();
        void provider.shutdown();
        return provider.getMeter('late');
      },
    ],
  ])('does not subscribe to events on %s (core would build every event for nothing)', (_, meter) => {
    const { observed, subscriptions } = countingResilience();
    const m = meter();
    const dispose = instrumentResilience(observed, m === undefined ? {} : { meter: m });
    expect(subscriptions()).toBe(0);
    dispose();
    dispose();
  });

  it('still subscribes on a real meter', () => {
    const { observed, subscriptions } = countingResilience();
    const dispose = instrumentResilience(observed, { meter: new MeterProvider().getMeter('t') });
    expect(subscriptions()).toBe(1);
    dispose();
  });
});

describe('a failed instrumentation leaves nothing behind', () => {
  it('refuses something that is not a Resilience with a configuration error, registering no gauge callback', async () => {
    const reader = new ManualReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const added = jest.spyOn(meter, 'addBatchObservableCallback');
    const removed = jest.spyOn(meter, 'removeBatchObservableCallback');
    let error: unknown;
    try {
      instrumentResilience({ admin: { inspect: async () => [] } } as unknown as InstrumentedResilience, {
        meter,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceError);
    expect(error).toMatchObject({ kind: 'configuration' });
    expect((error as Error).message).toContain('resilience');
    expect(added.mock.calls.length).toBe(removed.mock.calls.length);
    const { errors } = await reader.collect();
    expect(errors).toEqual([]);
  });

  it('removes the gauge callback again when subscribing throws', async () => {
    const reader = new ManualReader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const added = jest.spyOn(meter, 'addBatchObservableCallback');
    const removed = jest.spyOn(meter, 'removeBatchObservableCallback');
    let inspected = 0;
    const broken: InstrumentedResilience = {
      on: () => {
        throw new Error('no more listeners');
      },
      admin: {
        inspect: async () => {
          inspected++;
          return [];
        },
      } as unknown as InstrumentedResilience['admin'],
    };
    expect(() => instrumentResilience(broken, { meter })).toThrow('no more listeners');
    expect(added).toHaveBeenCalledTimes(1);
    expect(removed).toHaveBeenCalledTimes(1);
    await reader.collect();
    expect(inspected).toBe(0);
  });
});
