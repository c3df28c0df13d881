import { fairnessScenario, type FairnessMetrics } from './fairness';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

// Not shortened like the others: the late replica's AIMD descent from its initial limit of 100 (one 10% cut per
// 1 s cooldown) alone takes ~22 s, so a shorter run would measure the descent, not the fairness. Its traffic is
// already the smallest of the scenarios (10 servers shared by four replicas).
const SCALE = { ...TEST_SCALE, duration: 60_000 };

describe('scenario 3: four uncoordinated replicas (full duration, no investigation variants)', () => {
  let m: FairnessMetrics;
  const v = (name: string) => m.variants.find((x) => x.name === name)!;
  beforeAll(async () => {
    m = (await fairnessScenario(SCALE)).metrics;
  });

  it("AIMD replicas share the downstream fairly: Jain's index ≥ 0.95, converging after the late join", () => {
    for (const name of ['AIMD', 'AIMD, maxConcurrency 30']) {
      expect(v(name).jain).toBeGreaterThanOrEqual(0.95);
      expect(Number.isFinite(v(name).convergence)).toBe(true);
      expect(v(name).goodput).toBeGreaterThan(0.95);
      expect(v(name).admittedRates).toHaveLength(4);
    }
  });

  it('Gradient2 replicas overload the downstream and the late joiner keeps the largest share (documented miss)', () => {
    const g = v('Gradient2');
    expect(g.goodput).toBeLessThan(0.1);
    const [a, b, c, late] = g.admittedRates;
    expect(late!).toBeGreaterThan(Math.max(a!, b!, c!));
  });
});
