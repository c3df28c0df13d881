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

  it('Gradient2 (windowed samples) follows capacity down and back up within each phase', () => {
    const g = m.variants.find((v) => v.name === 'Gradient2')!;
    expect(g.limits.every((l) => l < 50)).toBe(true); // no longer pinned at its maximum of 100
    expect(g.limits[1]).toBeLessThan(g.limits[0]);
    expect(g.limits[2]).toBeGreaterThan(g.limits[1]);
    expect(Number.isFinite(g.settleDown)).toBe(true);
    expect(Number.isFinite(g.settleUp)).toBe(true);
    expect(g.goodput[0]).toBeGreaterThanOrEqual(0.95);
    expect(g.goodput[1]).toBeGreaterThanOrEqual(0.8);
    expect(g.goodput[2]).toBeGreaterThanOrEqual(0.95);
  });
});
