import { ChaosStrategy, ResiliencePolicy, TimeoutStrategy } from '@ballast/core';
import { MetricName } from './metric-names';
import { key, settle, setupMetrics } from './__tests__/metrics-harness';

/** SPEC §14.3: `ballast.chaos.injected` counts what a chaos strategy injected, by policy, route and injection. */
describe('chaos metrics', () => {
  it('ballast.chaos.injected counts each injection by policy and injection', async () => {
    const m = setupMetrics([
      new ResiliencePolicy({
        name: 'orders',
        strategies: [
          new TimeoutStrategy({ timeout: 100 }),
          new ChaosStrategy({ enabled: true, fault: { rate: 1, message: 'drill' } }),
        ],
      }),
      new ResiliencePolicy({
        name: 'search',
        strategies: [new ChaosStrategy({ enabled: true, latency: { rate: 1, delay: 10 } })],
      }),
      new ResiliencePolicy({
        name: 'quiet',
        strategies: [new ChaosStrategy({ outcome: { rate: 1, value: 'x' } })],
      }),
    ]);
    for (let i = 0; i < 3; i++)
      await expect(m.resilience.run(() => 1, { policy: 'orders', route: 'db' })).rejects.toThrow('drill');
    const s = settle(m.resilience.run(() => 2, { policy: 'search' }));
    await m.clock.advance(10);
    expect(s.value).toBe(2);
    await m.resilience.run(() => 3, { policy: 'quiet' }); // disabled: nothing injected, nothing counted
    const points = await m.points(MetricName.CHAOS_INJECTED);
    expect(points).toEqual(
      expect.arrayContaining([
        { attributes: key('orders', 'db', { 'ballast.injection': 'fault' }), value: 3 },
        { attributes: key('search', undefined, { 'ballast.injection': 'latency' }), value: 1 },
      ]),
    );
    expect(points).toHaveLength(2);
    m.dispose();
    await m.resilience.close();
  });
});
