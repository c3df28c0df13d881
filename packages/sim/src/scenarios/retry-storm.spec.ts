import { retryStormScenario, type RetryStormMetrics } from './retry-storm';
import { TEST_SCALE } from './scenario-types';

jest.setTimeout(120_000);

describe('scenario 7: retry storm during an outage (reduced scale)', () => {
  let m: RetryStormMetrics;
  const v = (prefix: string) => m.variants.find((x) => x.name.startsWith(prefix))!;
  beforeAll(async () => {
    m = (await retryStormScenario(TEST_SCALE)).metrics;
  });

  it('plain retry multiplies the load on the failing dependency by maxAttempts', () => {
    expect(v('retry ×4 (plain)').amplification).toBeGreaterThan(3.9);
    expect(v('retry ×4 (plain)').amplification).toBeLessThan(4.1);
    expect(v('no retry').amplification).toBe(1);
  });

  it('a RetryBudget caps it at 1 + ratio, and costs nothing while healthy', () => {
    const b = v('retry ×4 + RetryBudget');
    expect(b.amplification).toBeLessThanOrEqual(1 + m.ratio);
    expect(b.amplification).toBeGreaterThan(1);
    expect(b.healthyAmplification).toBe(1);
    expect(b.successAfter).toBe(1);
  });
});
