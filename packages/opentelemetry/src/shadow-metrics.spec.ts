import { BulkheadStrategy, ResiliencePolicy, RetryStrategy } from '@ballast/core';
import { MetricName } from './metric-names';
import { key, settle, setupMetrics } from './__tests__/metrics-harness';

/** SPEC §14.3: what a policy in shadow mode decided but did not enforce is counted apart, with `ballast.shadow`. */
describe('shadow-mode metrics', () => {
  it('refusals carry ballast.shadow; the calls count by how they really ended', async () => {
    const m = setupMetrics([
      new ResiliencePolicy({
        name: 'new-limit',
        mode: 'shadow',
        strategies: [new BulkheadStrategy({ maxConcurrency: 1 })],
      }),
      new ResiliencePolicy({
        name: 'enforced',
        strategies: [
          new BulkheadStrategy({ maxConcurrency: 1 }),
          new RetryStrategy({ maxAttempts: 2, backoff: { base: 1, max: 1, jitter: 'none' } }),
        ],
      }),
    ]);
    const slow = () => new Promise((resolve) => m.clock.setTimeout(() => resolve('slow'), 10));
    for (const policy of ['new-limit', 'enforced']) {
      const first = settle(m.resilience.run(slow, { policy }));
      const second = settle(m.resilience.run(slow, { policy }));
      await m.clock.advance(10);
      expect(first.value).toBe('slow');
      expect(policy === 'new-limit' ? second.value : (second.error as { code?: string }).code).toBe(
        policy === 'new-limit' ? 'slow' : 'bulkhead_full',
      );
    }
    expect(await m.points(MetricName.REJECTIONS)).toEqual(
      expect.arrayContaining([
        {
          attributes: key('new-limit', undefined, {
            'ballast.code': 'bulkhead_full',
            'ballast.shadow': true,
          }),
          value: 1,
        },
        { attributes: key('enforced', undefined, { 'ballast.code': 'bulkhead_full' }), value: 1 },
      ]),
    );
    const calls = await m.points(MetricName.CALLS);
    expect(calls).toEqual(
      expect.arrayContaining([
        { attributes: key('new-limit', undefined, { 'ballast.outcome': 'success' }), value: 2 },
      ]),
    );
    expect(
      calls.some(
        (p) =>
          p.attributes['ballast.policy'] === 'new-limit' && p.attributes['ballast.outcome'] !== 'success',
      ),
    ).toBe(false);
    m.dispose();
    await m.resilience.close();
  });
});
