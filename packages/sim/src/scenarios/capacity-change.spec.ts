import { capacityChangeScenario, type CapacityChangeMetrics } from './capacity-change';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 2: capacity halves, then recovers (reduced scale)', () => {
  let m: CapacityChangeMetrics;
  beforeAll(async () => {
    m = (await capacityChangeScenario(TEST_SCALE)).metrics;
  });

  it('AIMD follows capacity down (bounded by its 1 s cooldown) and back up (fast, additive per sample)', () => {
    const a = m.variants.find((v) => v.name === 'AIMD')!;
    expect(a.settleDown).toBeLessThan(8000);
    expect(a.settleUp).toBeLessThan(3000);
    expect(a.limits[1]).toBeLessThan(0.7 * a.limits[2]);
    // The first phase includes AIMD's descent from its initial limit of 100 (~15 s), longer than this reduced phase.
    expect(a.goodput[1]).toBeGreaterThanOrEqual(0.95);
    expect(a.goodput[2]).toBeGreaterThanOrEqual(0.95);
  });

  it('Gradient2 does not follow (documented): its limit sits at the maximum in every phase', () => {
    const g = m.variants.find((v) => v.name === 'Gradient2')!;
    expect(g.limits.every((l) => l >= 90)).toBe(true);
    expect(g.goodput[1]).toBeLessThan(0.2);
  });
});
