import fc from 'fast-check';
import { seededRandom } from '@ballast/testing';
import { WindowedP2Quantile } from './windowed-p2-quantile';

describe('WindowedP2Quantile', () => {
  it('defaults to a window of 512 and freezes its options', () => {
    const estimator = new WindowedP2Quantile(0.9);
    expect(estimator.options).toEqual({ p: 0.9, window: 512 });
    expect(Object.isFrozen(estimator.options)).toBe(true);
  });

  it('has no estimate until five samples of the epoch', () => {
    const estimator = new WindowedP2Quantile(0.5, { window: 8 });
    for (let i = 1; i <= 4; i++) {
      estimator.add(i);
      expect(estimator.value()).toBeUndefined();
    }
    expect(estimator.exceeds(0)).toBe(false);
    estimator.add(5);
    expect(estimator.value()).toBe(3);
    expect(estimator.exceeds(2)).toBe(true);
    expect(estimator.exceeds(3)).toBe(false);
    expect(estimator.count).toBe(5);
  });

  it('rotates every `window` samples and counts rotations', () => {
    const estimator = new WindowedP2Quantile(0.5, { window: 10 });
    for (let i = 0; i < 9; i++) estimator.add(i);
    expect(estimator.rotations).toBe(0);
    estimator.add(9);
    expect(estimator.rotations).toBe(1);
    // The retired estimator restarts: the younger one is empty right after a rotation.
    expect(estimator.toJSON().younger.count).toBe(0);
    expect(estimator.toJSON().older.count).toBe(10);
    for (let i = 0; i < 25; i++) estimator.add(i);
    expect(estimator.rotations).toBe(3);
    expect(estimator.count).toBe(35);
    // The older estimator always holds between `window` and 2·window samples once rotating.
    expect(estimator.toJSON().older.count).toBe(15);
  });

  it('reads the older estimator, which covers only recent samples after a rotation', () => {
    const estimator = new WindowedP2Quantile(0.5, { window: 10 });
    for (let i = 0; i < 10; i++) estimator.add(100);
    for (let i = 0; i < 10; i++) estimator.add(1);
    // Second rotation just happened: the older estimator saw only the ten 1s.
    expect(estimator.rotations).toBe(2);
    expect(estimator.value()).toBe(1);
  });

  it('follows a shifted distribution within two windows', () => {
    const random = seededRandom(7);
    const window = 512;
    const estimator = new WindowedP2Quantile(0.9, { window });
    for (let i = 0; i < 5 * window; i++) estimator.add(10 + 10 * random()); // p90 ≈ 19
    expect(estimator.value()!).toBeGreaterThan(18);
    expect(estimator.value()!).toBeLessThan(20);
    for (let i = 0; i < 2 * window; i++) estimator.add(100 + 100 * random()); // p90 ≈ 190
    expect(estimator.value()!).toBeGreaterThan(180);
    expect(estimator.value()!).toBeLessThan(200);
  });

  it('reset() opens a fresh epoch: warming again, rotations from zero', () => {
    const estimator = new WindowedP2Quantile(0.5, { window: 5 });
    for (let i = 0; i < 23; i++) estimator.add(i);
    expect(estimator.rotations).toBe(4);
    estimator.reset();
    expect(estimator.rotations).toBe(0);
    expect(estimator.count).toBe(0);
    expect(estimator.value()).toBeUndefined();
    for (const x of [7, 7, 7, 7]) estimator.add(x);
    expect(estimator.value()).toBeUndefined();
    estimator.add(7);
    expect(estimator.value()).toBe(7);
  });

  it('ignores non-finite samples', () => {
    const estimator = new WindowedP2Quantile(0.5, { window: 5 });
    for (const x of [1, Number.NaN, 2, Infinity, 3, 4, 5]) estimator.add(x);
    expect(estimator.count).toBe(5);
    expect(estimator.value()).toBe(3);
  });

  it('reports every invalid option in one RangeError', () => {
    expect(() => new WindowedP2Quantile(1.5, { window: 4 })).toThrow(
      'WindowedP2Quantile: p must be in (0, 1), got 1.5; window must be an integer ≥ 5, got 4',
    );
    expect(() => new WindowedP2Quantile(0.5, { window: 10.5 })).toThrow(RangeError);
  });

  it('property: the estimate stays within the range of the samples seen this epoch', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 40 }),
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 5, maxLength: 300 }),
        (window, xs) => {
          const estimator = new WindowedP2Quantile(0.75, { window });
          for (const x of xs) estimator.add(x);
          const v = estimator.value()!;
          expect(Number.isFinite(v)).toBe(true);
          expect(v).toBeGreaterThanOrEqual(Math.min(...xs));
          expect(v).toBeLessThanOrEqual(Math.max(...xs));
        },
      ),
    );
  });
});
