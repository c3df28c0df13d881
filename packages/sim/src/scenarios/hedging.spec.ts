import { hedgingScenario, type HedgingMetrics, type HedgingVariant } from './hedging';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 4: hedging with 1% 10× stragglers (reduced scale)', () => {
  let m: HedgingMetrics;
  const v = (name: string) => m.variants.find((x) => x.name === name)!;
  beforeAll(async () => {
    m = (await hedgingScenario(TEST_SCALE)).metrics;
  });

  it('hedging cuts p99 and p99.9 for a few percent of extra load', () => {
    const none = v('no hedge');
    const fixed = v('fixed delay 25 ms');
    const adaptive = v('adaptive p95 delay');
    expect(none.extraLoad).toBe(0);
    expect(fixed.extraLoad).toBeLessThan(0.03);
    expect(adaptive.extraLoad).toBeLessThan(0.07);
    expect(adaptive.p99).toBeLessThan(none.p99 / 2);
    expect(m.fixedCut).toBeGreaterThan(3);
    expect(m.adaptiveCut).toBeGreaterThan(4);
    expect(adaptive.finalDelay).toBeGreaterThan(12);
    expect(adaptive.finalDelay).toBeLessThan(25);
  });

  it('the p99.9 cut stays under the analytic bound, so the 10× target is missed (documented)', () => {
    expect(m.adaptiveCut).toBeLessThanOrEqual(m.cutBound * 1.05);
    expect(m.cutBound).toBeLessThan(10);
  });

  it('the Tail-at-Scale fan-out: hedging each leaf cuts the read p99 by most of what its bound allows', () => {
    const [none, fixed, adaptive] = m.fanOut as [HedgingVariant, HedgingVariant, HedgingVariant];
    expect(none.extraLoad).toBe(0);
    // ~2% of 20-way reads hit a 1-s leaf: the unhedged p99 is a straggler.
    expect(none.p99).toBeGreaterThan(500);
    for (const v of [fixed, adaptive]) {
      expect(v.cut).toBeLessThanOrEqual(v.bound * 1.05);
      expect(v.cut).toBeGreaterThan(10);
    }
    expect(adaptive.extraLoad).toBeLessThan(0.07);
    expect(fixed.extraLoad).toBeLessThan(0.03);
  });
});
