import { fairnessScenario, type FairnessMetrics } from './fairness';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 3: four uncoordinated replicas (reduced scale)', () => {
  let m: FairnessMetrics;
  const v = (name: string) => m.variants.find((x) => x.name === name)!;
  beforeAll(async () => {
    m = (await fairnessScenario(TEST_SCALE)).metrics;
  });

  it("AIMD replicas share the downstream fairly: Jain's index ≥ 0.95, converging after the late join", () => {
    for (const name of ['AIMD', 'AIMD, maxConcurrency 30']) {
      expect(v(name).jain).toBeGreaterThanOrEqual(0.95);
      expect(Number.isFinite(v(name).convergence)).toBe(true);
      expect(v(name).goodput).toBeGreaterThan(0.95);
      expect(v(name).admittedRates).toHaveLength(4);
    }
  });

  it('Gradient2 is "fair" only because every limit is pinned high, and the downstream drowns (documented)', () => {
    expect(v('Gradient2').jain).toBeGreaterThan(0.99);
    expect(v('Gradient2').goodput).toBeLessThan(0.1);
  });
});
