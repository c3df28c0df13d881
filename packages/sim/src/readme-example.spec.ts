import { AdaptiveBulkheadStrategy, ResiliencePolicy, TimeoutStrategy } from '@ballast/core';
import { lognormal, simulate, steps, summarize } from './index';

jest.setTimeout(60_000);

// The worked example of packages/sim/README.md, verbatim but for the chart files: keeps its numbers honest.
describe('README worked example', () => {
  it('AIMD keeps goodput at the halved capacity, with the numbers the README quotes', async () => {
    const policy = new ResiliencePolicy({
      name: 'inventory',
      strategies: [
        new AdaptiveBulkheadStrategy({ maxConcurrency: 40, latencyThreshold: 50, latencyQuantile: 0.9 }),
        new TimeoutStrategy({ timeout: '250ms' }),
      ],
    });
    const result = await simulate({
      policy,
      downstream: {
        servers: steps([0, 10], [20_000, 5], [40_000, 10]),
        serviceTime: lognormal({ median: 18, sigma: 0.5 }),
      },
      load: { rate: 600, criticality: { NORMAL: 3, CRITICAL: 1 } },
      replicas: 2,
      duration: 60_000,
      seed: 7,
      slo: 120,
    });
    const during = summarize(result, 20_000, 40_000);
    expect(Math.round(during.goodputRate)).toBe(243);
    expect(during.requests / 20).toBeCloseTo(606.8, 1);
    expect(Math.round(during.latency.p99)).toBe(125);
    expect(during.rejected).toEqual({ bulkhead_full: 7203 });
  });
});
