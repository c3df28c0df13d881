import { InMemoryControlStore, ResiliencePolicy, RetryStrategy } from '@ballast/core';
import { MetricName } from './metric-names';
import { key, setupMetrics } from './__tests__/metrics-harness';

/** SPEC §14.1 metrics: the standing overrides per policy, and the changes each replica applied. */
describe('control plane metrics', () => {
  const policies = () => [
    new ResiliencePolicy({ name: 'orders', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
    new ResiliencePolicy({ name: 'search', strategies: [new RetryStrategy({ maxAttempts: 1 })] }),
  ];

  it('ballast.control.overrides counts forced keys and a fleet retune per policy; ballast.control.applied counts changes', async () => {
    const m = setupMetrics(policies(), { stores: { control: new InMemoryControlStore() } });
    await m.resilience.run(() => 1, { policy: 'orders', route: 'eu' });
    await m.resilience.run(() => 1, { policy: 'orders', route: 'us' });
    await m.resilience.run(() => 1, { policy: 'search' });
    expect(await m.points(MetricName.CONTROL_OVERRIDES)).toEqual(
      expect.arrayContaining([
        { attributes: key('orders'), value: 0 },
        { attributes: key('search'), value: 0 },
      ]),
    );
    await m.resilience.admin.forceOpen('orders', 'eu', { ttl: '1m' });
    await m.resilience.admin.retune({ name: 'search', strategies: [{ type: 'retry', maxAttempts: 2 }] });
    expect(await m.points(MetricName.CONTROL_OVERRIDES)).toEqual(
      expect.arrayContaining([
        { attributes: key('orders'), value: 1 },
        { attributes: key('search'), value: 1 },
      ]),
    );
    await m.clock.advance(60_000); // the ttl ends
    expect(await m.points(MetricName.CONTROL_OVERRIDES)).toEqual(
      expect.arrayContaining([{ attributes: key('orders'), value: 0 }]),
    );
    await m.resilience.admin.forceOpen('search', undefined, { scope: 'local' });
    const applied = await m.points(MetricName.CONTROL_APPLIED);
    expect(applied).toEqual(
      expect.arrayContaining([
        {
          attributes: key('orders', 'eu', { 'ballast.action': 'forceOpen', 'ballast.scope': 'fleet' }),
          value: 1,
        },
        {
          attributes: key('orders', 'eu', { 'ballast.action': 'clearForcedOpen', 'ballast.scope': 'fleet' }),
          value: 1,
        },
        {
          attributes: key('search', undefined, { 'ballast.action': 'retune', 'ballast.scope': 'fleet' }),
          value: 1,
        },
        {
          attributes: key('search', undefined, { 'ballast.action': 'forceOpen', 'ballast.scope': 'local' }),
          value: 1,
        },
      ]),
    );
    expect(applied).toHaveLength(4);
    await m.resilience.close();
  });
});
