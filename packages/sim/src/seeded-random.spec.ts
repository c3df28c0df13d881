import { seededRandom } from '@ballast/testing';
import { mulberry32, randomStream, streamSeed } from './seeded-random';

describe('seeded random', () => {
  it('mulberry32 is the same generator as @ballast/testing seededRandom', () => {
    const a = mulberry32(12345);
    const b = seededRandom(12345);
    for (let i = 0; i < 100; i++) expect(a()).toBe(b());
  });

  it('streams are deterministic per (seed, name) and independent across names and seeds', () => {
    const draw = (seed: number, name: string): number[] =>
      Array.from({ length: 5 }, randomStream(seed, name));
    expect(draw(1, 'arrivals')).toEqual(draw(1, 'arrivals'));
    expect(draw(1, 'arrivals')).not.toEqual(draw(1, 'downstream'));
    expect(draw(1, 'arrivals')).not.toEqual(draw(2, 'arrivals'));
    expect(streamSeed(7, 'x')).toBe(streamSeed(7, 'x'));
  });

  it('draws lie in [0, 1) with mean ≈ 0.5', () => {
    const r = mulberry32(9);
    let sum = 0;
    let outside = 0;
    for (let i = 0; i < 50_000; i++) {
      const x = r();
      if (!(x >= 0 && x < 1)) outside++;
      sum += x;
    }
    expect(outside).toBe(0);
    expect(Math.abs(sum / 50_000 - 0.5)).toBeLessThan(0.01);
  });

  it('rejects a non-finite seed', () => {
    expect(() => mulberry32(Number.NaN)).toThrow(/finite/);
  });
});
