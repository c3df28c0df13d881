import { overloadScenario, type OverloadMetrics } from './overload';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 1: 3× overload (reduced scale)', () => {
  let m: OverloadMetrics;
  const v = (name: string) => m.variants.find((x) => x.name === name)!;
  beforeAll(async () => {
    m = (await overloadScenario(TEST_SCALE)).metrics;
  });

  it('without a limiter the downstream collapses: no goodput, p99 tens of times the no-load p99', () => {
    expect(v('no limiter').goodputFraction).toBeLessThan(0.05);
    expect(v('no limiter').p99Ratio).toBeGreaterThan(20);
  });

  it('AIMD meets the target: goodput ≥ 90% of capacity with p99 ≤ 2× no-load', () => {
    expect(v('AIMD').goodputFraction).toBeGreaterThanOrEqual(0.9);
    expect(v('AIMD').p99Ratio).toBeLessThanOrEqual(2);
    // It finds a limit near the 10 servers instead of the guessed 50.
    expect(v('AIMD').meanLimit).toBeGreaterThan(10);
    expect(v('AIMD').meanLimit).toBeLessThan(35);
    expect(v('fixed bulkhead (guess: 50)').p99Ratio).toBeGreaterThan(v('AIMD').p99Ratio);
  });

  // Issue #30: against the no-load p99 of 100,000 requests (not one 40-s run's ~2,000), AIMD + CoDel/LIFO and
  // Gradient2 land just above the 2× bar; they met it only against the noisier, higher baseline of before.
  it('AIMD + CoDel/LIFO keeps goodput but misses the 2× p99 bar narrowly; its queue wait p99 stays above the 5 ms CoDel target (documented)', () => {
    const c = v('AIMD + CoDel/LIFO');
    expect(c.goodputFraction).toBeGreaterThanOrEqual(0.9);
    expect(c.p99Ratio).toBeGreaterThan(2);
    expect(c.p99Ratio).toBeLessThan(2.2);
    // Calm periods after real idle instants (a release finding nobody waiting) allow up to `interval` of wait.
    expect(c.queueWaitP99).toBeGreaterThan(5);
    expect(c.queueWaitP99).toBeLessThanOrEqual(100);
  });

  it('Gradient2, fed one windowed sample per second, keeps goodput but misses the 2× p99 bar narrowly; its limit stays above the 10 servers', () => {
    const g = v('Gradient2');
    expect(g.goodputFraction).toBeGreaterThanOrEqual(0.9);
    expect(g.p99Ratio).toBeGreaterThan(2);
    expect(g.p99Ratio).toBeLessThan(2.2);
    expect(g.meanLimit).toBeGreaterThan(10);
    expect(g.meanLimit).toBeLessThan(50);
  });

  it('Gradient2 + CoDel/LIFO misses the target (documented): its standing downstream queue plus calm-period queue waits', () => {
    const c = v('Gradient2 + CoDel/LIFO');
    expect(c.goodputFraction).toBeGreaterThan(0.8);
    expect(c.p99Ratio).toBeGreaterThan(2);
    expect(c.queueWaitP99).toBeGreaterThan(5);
  });

  it('states no-load latency and the SLO it derives', () => {
    expect(m.capacity).toBeCloseTo(490.3, 0);
    expect(m.noLoadP99).toBeGreaterThan(50);
    expect(m.noLoadP99).toBeLessThan(70);
    expect(m.slo).toBeCloseTo(2 * m.noLoadP99, 9);
    expect(m.gradientSensitivity).toHaveLength(0);
  });
});
