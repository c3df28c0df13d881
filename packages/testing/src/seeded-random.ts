/**
 * A seeded pseudo-random source in [0, 1): mulberry32 (Tommy Ettinger, 2017). Small, fast and good enough for
 * jitter and simulations; the same seed always yields the same sequence.
 */
export function seededRandom(seed: number): () => number {
  if (!Number.isFinite(seed)) throw new RangeError(`seededRandom: seed must be a finite number, got ${seed}`);
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
