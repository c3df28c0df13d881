import type { RandomSource } from './seeded-random';

/** A service-time (or any positive duration) distribution, in ms. */
export interface Distribution {
  /** Draws one value using `random` (uniform in [0, 1)). */
  sample(random: RandomSource): number;
  /** The analytic mean, used to state capacity (`servers / mean`, by Little's law). */
  readonly mean: number;
  /** A short human description for reports. */
  readonly label: string;
}

function positive(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new RangeError(`${name} must be a finite number > 0, got ${value}`);
  return value;
}

/** Always `ms`. */
export function constant(ms: number): Distribution {
  positive('constant: ms', ms);
  return { sample: () => ms, mean: ms, label: `constant ${ms} ms` };
}

/**
 * Exponential with the given mean: the memoryless service time of the M/M/c queue, the textbook worst case
 * for variance at a given mean (p99 ≈ 4.6 × mean).
 */
export function exponential(mean: number): Distribution {
  positive('exponential: mean', mean);
  return {
    sample: (random) => -mean * Math.log(1 - random()),
    mean,
    label: `exponential, mean ${mean} ms`,
  };
}

/** A standard normal draw (Box–Muller; uses two uniforms, discards the second so draws stay aligned). */
export function standardNormal(random: RandomSource): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Log-normal with median `median` and shape `sigma` (ln-space standard deviation): the usual fit for RPC
 * latencies, right-skewed with a long tail (p99 = median · e^(2.326 σ)).
 */
export function lognormal(options: { median: number; sigma: number }): Distribution {
  const median = positive('lognormal: median', options.median);
  const sigma = positive('lognormal: sigma', options.sigma);
  const mu = Math.log(median);
  return {
    sample: (random) => Math.exp(mu + sigma * standardNormal(random)),
    mean: median * Math.exp((sigma * sigma) / 2),
    label: `lognormal, median ${median} ms, σ ${sigma}`,
  };
}

/**
 * `base`, except that with probability `probability` a draw is a straggler `factor` times slower — the
 * bimodal shape of "The Tail at Scale" (Dean & Barroso, 2013): GC pauses, cold caches, a slow disk.
 */
export function withStragglers(
  base: Distribution,
  options: { probability: number; factor: number },
): Distribution {
  const { probability, factor } = options;
  if (!(probability >= 0 && probability <= 1))
    throw new RangeError(`withStragglers: probability must be in [0, 1], got ${probability}`);
  positive('withStragglers: factor', factor);
  return {
    sample: (random) => {
      const x = base.sample(random);
      return random() < probability ? x * factor : x;
    },
    mean: base.mean * (1 - probability + probability * factor),
    label: `${base.label}, ${+(probability * 100).toFixed(3)}% stragglers ×${factor}`,
  };
}
