/** A source of uniform numbers in [0, 1), the same shape as core's `Random` port. */
export type RandomSource = () => number;

/**
 * mulberry32 (Tommy Ettinger, 2017): a 32-bit state, one multiply-xorshift per draw. Small, fast and plenty for
 * simulation; the same seed always yields the same sequence. Copied here (not imported from `@ballast/testing`)
 * because the simulator is a runtime package and may depend only on `@ballast/core` and a charting library.
 */
export function mulberry32(seed: number): RandomSource {
  if (!Number.isFinite(seed)) throw new RangeError(`mulberry32: seed must be a finite number, got ${seed}`);
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Derives the seed of an independent stream (arrivals, service times, each replica's jitter…) from the run's seed
 * and a stream name. Separate streams are what make comparisons fair ("common random numbers"): two policies run
 * with one seed see the very same arrival instants, because drawing a retry's jitter cannot shift the arrival
 * stream. FNV-1a over the name, mixed with the seed by a murmur3 finalizer.
 */
export function streamSeed(seed: number, stream: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < stream.length; i++) {
    h ^= stream.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= Math.imul(seed >>> 0, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A named independent stream of the run seeded by `seed` (see {@link streamSeed}). */
export function randomStream(seed: number, stream: string): RandomSource {
  return mulberry32(streamSeed(seed, stream));
}
