import type { ResiliencePolicy } from '@ballast/core';
import type { DownstreamCounters, DownstreamOptions } from './downstream';
import type { LoadOptions } from './load';
import type { RequestLog } from './request-log';
import type { DrainMode } from './virtual-clock';

/** Everything `simulate` needs: one policy, one shared downstream, the clients, and the run's shape. */
export interface SimulationOptions {
  /** The policy every replica runs (each replica has its own `Resilience`, so its own adaptive state). */
  readonly policy: ResiliencePolicy;
  readonly downstream: DownstreamOptions;
  readonly load: LoadOptions;
  /**
   * Leaf calls per client request, made in parallel through the replica's `Resilience` (a fan-out read, as in
   * "The Tail at Scale"): the request succeeds when every leaf does, and fails with the first leaf that fails.
   * Each leaf attempt counts in the request's `attempts`, so amplification is per request, not per leaf. Default 1.
   */
  readonly fanOut?: number;
  /** Uncoordinated service instances sharing the downstream. Default 1. */
  readonly replicas?: number;
  /** Virtual ms during which requests arrive. */
  readonly duration: number;
  /** Same seed → identical results. */
  readonly seed: number;
  /** A success counts toward goodput only when it took at most this many ms. Default 1000. */
  readonly slo?: number;
  /** Period (ms) of the trajectory samples (limits, breaker, hedge delay, queue). Default 250. */
  readonly sampleInterval?: number;
  /** Extra virtual ms after the last arrival for in-flight requests to finish; the rest are `unfinished`. Default 5000. */
  readonly settle?: number;
  /** How continuations are drained between events (see `VirtualClock`). Default `'tick'`. */
  readonly drain?: DrainMode;
  /** Writes the default charts (throughput, latency, limits) as SVG files into `dir`, named `<name>-*.svg`. */
  readonly charts?: { readonly dir: string; readonly name?: string };
}

/** One replica's trajectory: a value per sample, `null` before the state exists. */
export interface ReplicaTrajectories {
  readonly limit: (number | null)[];
  readonly inUse: (number | null)[];
  readonly waiting: (number | null)[];
  /** 0 closed, 1 half-open, 2 open. */
  readonly breaker: (number | null)[];
  readonly hedgeDelay: (number | null)[];
  readonly throttleProbability: (number | null)[];
}

/** Periodic samples of the whole system, all aligned on `t`. */
export interface Samples {
  /** Sample instants (ms). */
  readonly t: number[];
  /** Downstream running totals at each instant. */
  readonly downstream: DownstreamCounters[];
  readonly queued: number[];
  readonly busy: number[];
  /** Downstream capacity (requests/s) at each instant. */
  readonly capacity: number[];
  /** Client requests started and not yet settled. */
  readonly inflight: number[];
  readonly replicas: ReplicaTrajectories[];
}

/** Counts gathered from `resilience.on` events. */
export interface EventTallies {
  readonly breakerTransitions: { t: number; replica: number; from: string; to: string }[];
  retries: number;
  hedges: number;
  hedgeWins: number;
  throttleRejects: number;
  attemptTimeouts: number;
  /** `bulkhead_shed` events (CoDel sheds at dequeue) by criticality 0..3. */
  readonly queueShedsByCriticality: number[];
  /**
   * A policy in shadow mode (SPEC §14.3): the refusals it decided but did not enforce, by code (its requests ran).
   * Compare with an enforced run's `summarize(r).rejected` to see what enforcing would refuse.
   */
  readonly shadowRejected: Record<string, number>;
  /** `chaos_injected` events by injection (a policy with a `ChaosStrategy`; shadow-mode draws included). */
  readonly chaosInjected: { fault: number; latency: number; outcome: number };
}

/** What `simulate` returns. Windowed summaries: `summarize(result, from, to)`; series: `timeSeries(result)`. */
export interface SimulationResult {
  readonly seed: number;
  readonly duration: number;
  readonly replicas: number;
  readonly slo: number;
  readonly sampleInterval: number;
  /** Initial downstream capacity, requests/s (servers / mean service time). */
  readonly capacity: number;
  readonly log: RequestLog;
  readonly samples: Samples;
  readonly events: EventTallies;
  /** Virtual-clock events fired. */
  readonly eventsFired: number;
  /** Wall-clock ms the run took. */
  readonly wallMs: number;
  /** Chart files written (when `charts` was given). */
  readonly charts: string[];
}
