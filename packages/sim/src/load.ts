import { Criticality } from '@ballast/core';
import type { RandomSource } from './seeded-random';
import { checkSchedule, nextChange, valueAt, type Schedule } from './schedule';
import type { VirtualClock } from './virtual-clock';

/** Criticality names, as in core's `Criticality`. */
export type CriticalityName = keyof typeof Criticality;

/** Open-loop clients: arrivals do not wait for earlier responses, so overload is not self-limiting. */
export interface LoadOptions {
  /** Arrivals per second over all replicas (Poisson; a schedule for time-varying load). */
  readonly rate: Schedule;
  /** Relative weight of each criticality; default every request NORMAL. */
  readonly criticality?: Partial<Record<CriticalityName, number>>;
  /** Each request's deadline budget in ms, bound with core's `withDeadline` (the caller gives up). Default none. */
  readonly deadline?: number;
  /**
   * Relative share of the arrivals each replica receives (load-balancer weights, each a schedule so a replica can
   * join or leave mid-run); default equal.
   */
  readonly replicaWeights?: readonly Schedule[];
}

/** One arrival: which replica receives it and how critical it is. */
export interface Arrival {
  readonly replica: number;
  readonly criticality: Criticality;
}

const LEVELS: readonly CriticalityName[] = ['BEST_EFFORT', 'DEGRADED', 'NORMAL', 'CRITICAL'];

/** Cumulative weights for sampling; throws on negative or all-zero weights. */
function cumulative(name: string, weights: readonly number[]): number[] {
  let sum = 0;
  const out = weights.map((w) => {
    if (!(Number.isFinite(w) && w >= 0))
      throw new RangeError(`${name}: weights must be finite and ≥ 0, got ${w}`);
    return (sum += w);
  });
  if (!(sum > 0)) throw new RangeError(`${name}: at least one weight must be > 0`);
  return out.map((c) => c / sum);
}

function pick(cum: readonly number[], u: number): number {
  for (let i = 0; i < cum.length; i++) if (u < cum[i]!) return i;
  return cum.length - 1;
}

/**
 * Generates Poisson arrivals at a piecewise-constant rate until `until`. Between rate changes the gaps are
 * exponential with mean 1/rate; at a change the pending gap is simply redrawn, which is exact because the
 * exponential is memoryless. All draws (gaps, replica, criticality) come from one stream, so every policy
 * compared under one seed sees the same arrivals.
 */
export class PoissonArrivals {
  readonly #rate: Schedule;
  readonly #critCum: number[];
  readonly #replicaWeights: readonly Schedule[];
  readonly #staticReplicas: number[] | undefined;

  constructor(
    options: LoadOptions,
    replicas: number,
    readonly random: RandomSource,
  ) {
    checkSchedule('load.rate', options.rate);
    this.#rate = options.rate;
    const c = options.criticality;
    this.#critCum = cumulative(
      'load.criticality',
      c === undefined ? [0, 0, 1, 0] : LEVELS.map((l) => c[l] ?? 0),
    );
    const w = options.replicaWeights ?? Array.from({ length: replicas }, () => 1);
    if (w.length !== replicas) {
      throw new RangeError(
        `load.replicaWeights must have one weight per replica (${replicas}), got ${w.length}`,
      );
    }
    w.forEach((x, i) => checkSchedule(`load.replicaWeights[${i}]`, x));
    this.#replicaWeights = w;
    this.#staticReplicas = w.every((x) => typeof x === 'number')
      ? cumulative('load.replicaWeights', w as number[])
      : undefined;
  }

  /** Schedules arrivals on `clock` from now until `until` (exclusive), calling `onArrival` for each. */
  start(clock: VirtualClock, until: number, onArrival: (a: Arrival) => void): void {
    const next = (): void => {
      const now = clock.now();
      const rate = valueAt(this.#rate, now);
      const change = nextChange(this.#rate, now);
      const gap = rate > 0 ? (-Math.log(1 - this.random()) * 1000) / rate : Infinity;
      const at = now + gap;
      if (at >= change) {
        if (change < until) clock.setTimeout(next, change - now);
        return;
      }
      if (at >= until) return;
      clock.setTimeout(() => {
        onArrival(this.#draw(clock.now()));
        next();
      }, gap);
    };
    next();
  }

  #draw(now: number): Arrival {
    const cum =
      this.#staticReplicas ??
      cumulative(
        'load.replicaWeights',
        this.#replicaWeights.map((w) => valueAt(w, now)),
      );
    const replica = cum.length === 1 ? 0 : pick(cum, this.random());
    const criticality = pick(this.#critCum, this.random()) as Criticality;
    return { replica, criticality };
  }
}
