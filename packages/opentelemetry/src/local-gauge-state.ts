import type { BreakerState, ResilienceEvent, ResilienceStateSnapshot } from '@ballast/core';

/** What this process knows of one `(policy, route)` without asking a store. */
export interface LocalKeyState {
  breaker: BreakerState | undefined;
  /** `seq` of the event that set `breaker`; 0 when it came from a snapshot. */
  breakerSeq: number;
  concurrencyLimit: number | undefined;
  limitSeq: number;
}

/** Default bound on keys first seen through events while no inspect answers (core bounds routes per policy). */
export const DEFAULT_MAX_LOCAL_KEYS = 10_000;

/**
 * The gauges' fallback when `admin.inspect()` does not answer in time: the last snapshot an inspect returned (on time
 * or late), updated by the events core emits for state it changes — `breaker_state` (this process's breaker
 * transitions, including on local state while a store is down) and `bulkhead_limit` (adaptive limits).
 *
 * Only those two gauges have a local source: bulkhead in-use / waiting, hedge delay and throttle probability are only
 * readable through `inspect()` (core has no synchronous, store-free snapshot), so the fallback leaves them out rather
 * than repeat a stale value as if it were fresh.
 *
 * Events during an inspect are not lost to its answer: an answer only replaces what was known when it started.
 */
export class LocalGaugeState {
  readonly #maxKeys: number;
  #policies = new Map<string, Map<string | undefined, LocalKeyState>>();
  #size = 0;
  /** Incremented by every event applied; an inspect remembers the value it started at. */
  #seq = 0;

  constructor(maxKeys = DEFAULT_MAX_LOCAL_KEYS) {
    this.#maxKeys = maxKeys;
  }

  /** The point an inspect starts from: events after it win over that inspect's answer. */
  mark(): number {
    return this.#seq;
  }

  onEvent(event: ResilienceEvent): void {
    if (event.type === 'breaker_state') {
      const s = this.#key(event.policy, event.route);
      if (s === undefined) return;
      s.breaker = event.to;
      s.breakerSeq = ++this.#seq;
    } else if (event.type === 'bulkhead_limit') {
      const s = this.#key(event.policy, event.route);
      if (s === undefined) return;
      s.concurrencyLimit = event.limit;
      s.limitSeq = ++this.#seq;
    }
  }

  /**
   * Adopts an inspect's answer (which lists every key core still has: evicted keys and retuned-away state go), keeping
   * what events changed after `mark`.
   */
  apply(snapshots: readonly ResilienceStateSnapshot[], mark: number): void {
    const previous = this.#policies;
    this.#policies = new Map();
    this.#size = 0;
    for (const s of snapshots) {
      const k = this.#create(s.policy, s.route);
      k.breaker = s.breaker?.state;
      k.concurrencyLimit = s.concurrencyLimit;
    }
    for (const [policy, routes] of previous) {
      for (const [route, old] of routes) {
        const newerBreaker = old.breakerSeq > mark;
        const newerLimit = old.limitSeq > mark;
        if (!newerBreaker && !newerLimit) continue;
        const k = this.#policies.get(policy)?.get(route) ?? this.#create(policy, route);
        if (newerBreaker) {
          k.breaker = old.breaker;
          k.breakerSeq = old.breakerSeq;
        }
        if (newerLimit) {
          k.concurrencyLimit = old.concurrencyLimit;
          k.limitSeq = old.limitSeq;
        }
      }
    }
  }

  /** Visits every known key. */
  forEach(visit: (policy: string, route: string | undefined, state: Readonly<LocalKeyState>) => void): void {
    for (const [policy, routes] of this.#policies) {
      for (const [route, state] of routes) visit(policy, route, state);
    }
  }

  /** The key's state, created on first sight; undefined when the bound is reached (the event is then dropped). */
  #key(policy: string, route: string | undefined): LocalKeyState | undefined {
    const found = this.#policies.get(policy)?.get(route);
    if (found !== undefined) return found;
    return this.#size < this.#maxKeys ? this.#create(policy, route) : undefined;
  }

  #create(policy: string, route: string | undefined): LocalKeyState {
    let routes = this.#policies.get(policy);
    if (routes === undefined) {
      routes = new Map();
      this.#policies.set(policy, routes);
    }
    const state: LocalKeyState = {
      breaker: undefined,
      breakerSeq: 0,
      concurrencyLimit: undefined,
      limitSeq: 0,
    };
    routes.set(route, state);
    this.#size++;
    return state;
  }
}
