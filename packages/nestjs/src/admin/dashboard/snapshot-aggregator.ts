import type { BreakerState, CallOutcome, ResilienceEvent } from '@ballast/core';
import type { AdminStateEntry } from '../resilience-admin.controller';

/** Calls per second by how they ended, over the last interval. */
export type OutcomeRates = Record<CallOutcome, number>;

/** One breaker transition, `ago` ms before the snapshot that carries it (relative: the clock is monotonic). */
export interface BreakerChange {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly ago: number;
}

/** Latency of the calls that succeeded or failed in the interval (not rejected or cancelled), in ms; absent when none did. */
export interface LatencyQuantiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
}

/** One (policy, route) as the dashboard shows it: the admin state plus what the events of the interval say. */
export interface DashboardEntry extends AdminStateEntry {
  readonly rates: OutcomeRates;
  /** Rejected calls per second by Ballast code (`circuit_open`, `rate_limited`, …). */
  readonly rejections: Readonly<Record<string, number>>;
  /**
   * Shadow mode (SPEC §14.3): refusals per second by code that the policy decided but did not enforce (its calls
   * ran). Absent when there were none in the interval.
   */
  readonly shadowRejections?: Readonly<Record<string, number>>;
  readonly latency?: LatencyQuantiles;
  /** The last {@link HISTORY_LENGTH} breaker transitions, oldest first. */
  readonly breakerHistory: readonly BreakerChange[];
}

/** What one `snapshot` server-sent event carries. */
export interface DashboardSnapshot {
  /** ms the rates are measured over (the time since the previous snapshot). */
  readonly interval: number;
  readonly policies: readonly string[];
  readonly entries: readonly DashboardEntry[];
}

/** How many breaker transitions each (policy, route) keeps. */
export const HISTORY_LENGTH = 20;
/** How many call durations one (policy, route) keeps per interval: beyond it, every other one (a uniform thinning). */
export const LATENCY_SAMPLES = 1024;
/** How many (policy, route) keys with breaker history are kept; those no longer in the admin state go first. */
export const MAX_HISTORY_KEYS = 10_000;

interface Window {
  readonly policy: string;
  readonly route: string | null;
  readonly counts: Record<CallOutcome, number>;
  readonly rejections: Map<string, number>;
  readonly shadowRejections: Map<string, number>;
  readonly durations: number[];
  /** Keep one duration in `stride` (doubled each time the buffer fills), so a busy route stays bounded. */
  stride: number;
  seen: number;
}

interface Change {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly at: number;
}

const keyOf = (policy: string, route: string | null | undefined): string => `${policy}\u0000${route ?? ''}`;
const freshCounts = (): Record<CallOutcome, number> => ({
  success: 0,
  failure: 0,
  rejected: 0,
  cancelled: 0,
});

/**
 * Folds the events of one interval and the admin state at its end into a {@link DashboardSnapshot}. Pure: time is
 * an argument (the `Resilience`'s clock, read by the caller), so it runs on a FakeClock in tests.
 */
export class SnapshotAggregator {
  #windows = new Map<string, Window>();
  readonly #history = new Map<string, Change[]>();
  #since: number;

  constructor(now: number) {
    this.#since = now;
  }

  /** Starts a fresh interval (a first viewer after none): rates count from `now`. */
  restart(now: number): void {
    this.#windows = new Map();
    this.#since = now;
  }

  record(event: ResilienceEvent, now: number): void {
    if (event.type === 'rejected' && event.shadow === true) {
      const w = this.#window(event.policy, event.route ?? null);
      w.shadowRejections.set(event.code, (w.shadowRejections.get(event.code) ?? 0) + 1);
    } else if (event.type === 'call') {
      const w = this.#window(event.policy, event.route ?? null);
      w.counts[event.outcome]++;
      if (event.outcome === 'rejected') {
        const code = event.code ?? 'unknown';
        w.rejections.set(code, (w.rejections.get(code) ?? 0) + 1);
      }
      // Latency is of the calls that ran: a rejection's few µs would pull every quantile towards 0.
      if ((event.outcome === 'success' || event.outcome === 'failure') && w.seen++ % w.stride === 0) {
        w.durations.push(event.duration);
        if (w.durations.length >= LATENCY_SAMPLES) {
          // Keep every other sample and halve the sampling rate: the kept ones stay evenly spread over the interval.
          let j = 0;
          for (let i = 0; i < w.durations.length; i += 2) w.durations[j++] = w.durations[i]!;
          w.durations.length = j;
          w.stride *= 2;
        }
      }
    } else if (event.type === 'breaker_state') {
      const key = keyOf(event.policy, event.route);
      const list = this.#history.get(key) ?? [];
      list.push({ from: event.from, to: event.to, at: now });
      if (list.length > HISTORY_LENGTH) list.shift();
      this.#history.delete(key); // re-inserted last: the map's order is least recently changed first
      this.#history.set(key, list);
      if (this.#history.size > MAX_HISTORY_KEYS) this.#history.delete(this.#history.keys().next().value!);
    }
  }

  /** The snapshot of the interval ending `now`, and a new interval begins. */
  take(policies: readonly string[], state: readonly AdminStateEntry[], now: number): DashboardSnapshot {
    const elapsed = Math.max(0, now - this.#since);
    const perSecond = (n: number): number => (elapsed === 0 ? 0 : round((n * 1000) / elapsed));
    const windows = this.#windows;
    this.#windows = new Map();
    this.#since = now;
    // A (policy, route) the admin state does not list (a policy of retries and timeouts only) still had calls.
    const seen = new Set(state.map((s) => keyOf(s.policy, s.route)));
    const versions = new Map(state.map((s) => [s.policy, s.version]));
    const modes = new Map(state.map((s) => [s.policy, s.mode]));
    const unlisted = [...windows.values()]
      .filter((w) => !seen.has(keyOf(w.policy, w.route)))
      .map((w): AdminStateEntry => ({
        policy: w.policy,
        route: w.route,
        forcedOpen: false,
        version: versions.get(w.policy) ?? 0,
        mode: modes.get(w.policy) ?? 'enforce',
      }));
    const entries = [...state, ...unlisted].map((s): DashboardEntry => {
      const key = keyOf(s.policy, s.route);
      const w = windows.get(key);
      const counts = w?.counts ?? freshCounts();
      const rejections: Record<string, number> = {};
      for (const [code, n] of w?.rejections ?? []) rejections[code] = perSecond(n);
      let shadowRejections: Record<string, number> | undefined;
      for (const [code, n] of w?.shadowRejections ?? []) (shadowRejections ??= {})[code] = perSecond(n);
      const latency = w === undefined ? undefined : quantiles(w.durations);
      return {
        ...s,
        rates: {
          success: perSecond(counts.success),
          failure: perSecond(counts.failure),
          rejected: perSecond(counts.rejected),
          cancelled: perSecond(counts.cancelled),
        },
        rejections,
        ...(shadowRejections === undefined ? {} : { shadowRejections }),
        ...(latency === undefined ? {} : { latency }),
        breakerHistory: (this.#history.get(key) ?? []).map((c) => ({
          from: c.from,
          to: c.to,
          ago: now - c.at,
        })),
      };
    });
    return { interval: Math.round(elapsed), policies, entries };
  }

  #window(policy: string, route: string | null): Window {
    const key = keyOf(policy, route);
    let w = this.#windows.get(key);
    if (w === undefined) {
      w = {
        policy,
        route,
        counts: freshCounts(),
        rejections: new Map(),
        shadowRejections: new Map(),
        durations: [],
        stride: 1,
        seen: 0,
      };
      this.#windows.set(key, w);
    }
    return w;
  }
}

const round = (n: number): number => Math.round(n * 100) / 100;

/** Nearest-rank quantiles of the interval's (sampled) durations. */
export function quantiles(durations: readonly number[]): LatencyQuantiles | undefined {
  if (durations.length === 0) return undefined;
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q: number): number =>
    round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: round(sorted[sorted.length - 1]!),
    samples: sorted.length,
  };
}
