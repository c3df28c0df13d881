import { priorityScenario, type PriorityMetrics } from './priority-shedding';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 6: burst into a prioritized CoDel queue (reduced scale)', () => {
  let m: PriorityMetrics;
  beforeAll(async () => {
    m = (await priorityScenario(TEST_SCALE)).metrics;
  });

  it('sheds by criticality: lower tiers first and most, CRITICAL rarely (not zero — documented)', () => {
    const f = m.shedFraction;
    expect(f[0]).toBeGreaterThanOrEqual(f[1]! - 0.02);
    expect(f[1]).toBeGreaterThan(f[2]!);
    expect(f[2]).toBeGreaterThan(f[3]!);
    expect(f[3]).toBeLessThan(0.02);
    expect(f[3]).toBeLessThan(f[2]! / 10);
    expect(m.shed.slice(0, 3).every((x) => x > 100)).toBe(true);
    // Any CRITICAL shed is CoDel's at dequeue, never a displacement by a lower tier.
    expect(Object.keys(m.criticalShedCodes).filter((k) => k !== 'bulkhead_queue_shed')).toEqual([]);
  });

  it('every served request waited within its CoDel bound (interval × tier scale)', () => {
    m.maxWait.forEach((w, i) => expect(w).toBeLessThanOrEqual(m.waitBound[i]!));
  });

  it('sheds happen during the burst (BEST_EFFORT may go earlier: its allowance is a quarter)', () => {
    expect(m.firstShed[2]).toBeGreaterThanOrEqual(m.burst[0]);
    expect(m.firstShed[1]).toBeGreaterThanOrEqual(m.burst[0]);
  });
});
