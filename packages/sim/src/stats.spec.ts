import { jainIndex, percentiles, quantileSorted, settlingTime } from './stats';

describe('stats', () => {
  it('nearest-rank quantiles', () => {
    const s = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantileSorted(s, 0.5)).toBe(50);
    expect(quantileSorted(s, 0.99)).toBe(99);
    expect(quantileSorted(s, 1)).toBe(100);
    expect(quantileSorted([], 0.5)).toBeNaN();
    const p = percentiles([3, 1, 2]);
    expect([p.count, p.p50, p.max, p.mean]).toEqual([3, 2, 3, 2]);
  });

  it("Jain's index is 1 for equal shares and 1/n when one party takes all", () => {
    expect(jainIndex([5, 5, 5, 5])).toBe(1);
    expect(jainIndex([8, 0, 0, 0])).toBeCloseTo(0.25, 12);
    expect(jainIndex([1, 2])).toBeCloseTo(9 / 10, 12);
  });

  it('settling time: first instant after which the value stays in the band of its final level', () => {
    const t = Array.from({ length: 20 }, (_, i) => i * 100);
    const v = [40, 38, 30, 25, 22, 21, 20, 20, 19, 20, 21, 20, 20, 20, 19, 20, 20, 21, 20, 20];
    const r = settlingTime({ t, v }, 0, 2000, { band: 0.2 });
    expect(r.settled).toBe(20);
    expect(r.time).toBe(400); // 25 (at 300 ms) is out of ±4; 22 (at 400 ms) and everything after is in
    const never = settlingTime({ t: [0, 1, 2, 3, 4, 5, 6, 7], v: [1, 100, 1, 100, 1, 100, 1, 100] }, 0, 8, {
      band: 0.1,
      minBand: 0,
    });
    expect(never.time).toBeNaN();
  });
});
