import { priorityScenario, type PriorityMetrics } from './priority-shedding';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 6: burst into a prioritized CoDel queue (reduced scale)', () => {
  let m: PriorityMetrics;
  beforeAll(async () => {
    m = (await priorityScenario(TEST_SCALE)).metrics;
  });

  it('sheds by criticality: lower tiers first and most, CRITICAL never (strict priority serving)', () => {
    const f = m.shedFraction;
    expect(f[0]).toBeGreaterThanOrEqual(f[1]! - 0.02);
    expect(f[1]).toBeGreaterThan(f[2]!);
    expect(f[2]).toBeGreaterThan(f[3]!);
    expect(m.shed[3]).toBe(0);
    expect(m.shed.slice(0, 3).every((x) => x > 100)).toBe(true);
    expect(m.criticalShedCodes).toEqual({});
  });

  it('every served request waited within its CoDel bound (interval × tier scale)', () => {
    m.maxWait.forEach((w, i) => expect(w).toBeLessThanOrEqual(m.waitBound[i]!));
  });

  it('NORMAL is shed only during the burst, CRITICAL never (the lowest tiers wait behind all others and may go earlier)', () => {
    expect(m.firstShed[2]).toBeGreaterThanOrEqual(m.burst[0]);
    expect(m.firstShed[3]).toBeNaN(); // never shed
  });
});
