/**
 * Store ports (SPEC §5, §7). Each port is a set of *atomic operations*, never get/set, so a remote store can run
 * each one as a single round trip (one Lua script on Redis). Methods may answer synchronously (in-memory) or with
 * a Promise (remote): the executor only awaits when it is handed a promise, which keeps the in-memory hot path
 * free of promise allocations.
 *
 * `now` is the caller's clock reading in ms. In-memory stores use it; remote stores may use their own server clock
 * instead (Redis uses `TIME`) and must then be consistent with themselves.
 *
 * Results may be reused objects: a caller copies what it needs before its next call on the same store.
 */

import type { ControlStore } from '../control/control-store';

export type MaybePromise<T> = T | Promise<T>;

/** Identity of one per-key state: a policy name and an optional route. `id` is a canonical string of both. */
export interface StateKey {
  readonly policy: string;
  readonly route: string | undefined;
  /** Unique per (policy, route); safe to embed in a storage key. */
  readonly id: string;
}

/** Builds the canonical key (routes may contain any character; the encoding keeps (a, "b") ≠ ("a/b")). */
export function stateKey(policy: string, route: string | undefined): StateKey {
  const id = route === undefined ? encodePart(policy) : `${encodePart(policy)}|${encodePart(route)}`;
  return Object.freeze({ policy, route, id });
}

const LONE_SURROGATE = /(\p{Cs})/u;

/**
 * `encodeURIComponent`, which also takes a lone UTF-16 surrogate (a route cut from user input mid-character):
 * that one throws URIError there, so it is written `%uD800` — a form encodeURIComponent never produces (it writes
 * `%` itself as `%25`), so no two strings share an id.
 */
function encodePart(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .split(LONE_SURROGATE)
      .map((part, i) =>
        i % 2 === 1 ? `%u${part.charCodeAt(0).toString(16).toUpperCase()}` : encodeURIComponent(part),
      )
      .join('');
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Circuit breaker

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Breaker parameters in ms (resolved from `CircuitBreakerStrategy`). */
export interface BreakerParams {
  /** Trip when failures/calls ≥ failureRatio … */
  readonly failureRatio: number;
  /** … over a rolling window of this many ms, kept as {@link BREAKER_BUCKETS} time buckets … */
  readonly samplingWindow: number;
  /** … once at least this many calls were recorded in the window. */
  readonly minThroughput: number;
  /** How long the breaker stays open; also the lease time of a half-open probe. */
  readonly breakDuration: number;
  /** Probes admitted per half-open period; all must succeed to close. */
  readonly halfOpenMaxCalls: number;
  /**
   * Growing breaks (SPEC §14.3), off when absent: each re-open after a failed half-open period lasts the previous
   * break × `breakDurationMultiplier` (default 2), capped here; a close resets it to `breakDuration`. The store
   * keeps the current break length with the state, so every replica of a fleet waits the same break.
   */
  readonly maxBreakDuration?: number;
  readonly breakDurationMultiplier?: number;
}

/** Number of time buckets of the rolling breaker window (each `samplingWindow / 10` ms). */
export const BREAKER_BUCKETS = 10;

export interface BreakerTransition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  /**
   * On a transition to `open` only: the outcomes that opened it, as `failures / calls` and `calls`. Closed → open:
   * the rolling window at the moment it tripped. Half-open → open: the probes of that half-open period that had
   * reported, the failing one included (`calls` = successes + 1, so `failureRatio` = 1 / calls). Required on
   * every transition to `open` (the store conformance suite checks them); absent on the others.
   */
  readonly failureRatio?: number;
  readonly calls?: number;
}

export type BreakerAdmission =
  | {
      readonly admitted: true;
      /** State at admission: 'closed' or 'half_open'. */
      readonly state: BreakerState;
      /** Increments on every state change; outcomes of an older generation are ignored. */
      readonly generation: number;
      /** Set when this call holds a half-open probe lease. */
      readonly lease: string | undefined;
      /** Set when this very call moved the state (open → half_open). */
      readonly transition: BreakerTransition | undefined;
    }
  | {
      readonly admitted: false;
      readonly state: BreakerState;
      /** ms until the breaker may admit again (open: until half-open; half-open: until a lease may expire). */
      readonly retryAfter: number;
      readonly transition: BreakerTransition | undefined;
    };

/**
 * What a finished call tells the breaker: `success` (healthy), `failure`, or `release` (neutral/cancelled: not
 * recorded; a probe gives its lease back).
 */
export type BreakerOutcome = 'success' | 'failure' | 'release';

export interface BreakerPermit {
  readonly generation: number;
  readonly lease: string | undefined;
}

export interface BreakerRecordResult {
  readonly state: BreakerState;
  /** Set when this outcome moved the state. */
  readonly transition: BreakerTransition | undefined;
}

export interface BreakerSnapshot {
  readonly state: BreakerState;
  /**
   * `failures / calls` (0 when no calls). Closed: over the rolling window at `now`. Open and half-open: of the
   * outcomes that last opened the breaker, frozen at that moment (the same numbers as the `failureRatio` and `calls`
   * of that transition), so an open breaker shows why it opened instead of an empty window.
   */
  readonly failureRatio: number;
  /** Calls counted in `failureRatio` (see there). */
  readonly calls: number;
  readonly generation: number;
  /**
   * Open only: ms from `now` (on the store's clock, which may be the Redis server's) until the break ends and the
   * next call may probe — the `retryAfter` a call rejected at that moment gets; always > 0 (an open breaker whose
   * break is over reads `half_open`). Required when open (the store conformance suite checks it); absent in the
   * other states.
   */
  readonly retryAfter?: number;
}

export interface CircuitBreakerStore {
  /** Admit or reject one call; moves open → half_open lazily once `breakDuration` has passed. */
  acquire(key: StateKey, params: BreakerParams, now: number): MaybePromise<BreakerAdmission>;
  /** Report the outcome of an admitted call. Ignored when `permit.generation` is not the current generation. */
  record(
    key: StateKey,
    params: BreakerParams,
    permit: BreakerPermit,
    outcome: BreakerOutcome,
    now: number,
  ): MaybePromise<BreakerRecordResult>;
  inspect(key: StateKey, params: BreakerParams, now: number): MaybePromise<BreakerSnapshot>;
  /** Back to closed with an empty window (a new generation). */
  reset(key: StateKey, now: number): MaybePromise<void>;
  /** Forget a key entirely (LRU eviction of an idle key). Optional: remote stores rely on TTLs. */
  evict?(key: StateKey): void;
}

// ---------------------------------------------------------------------------------------------------------------
// Rate limit

export interface RateLimitParams {
  readonly permits: number;
  /** ms over which `permits` tokens are refilled. */
  readonly per: number;
  readonly burst: number;
}

export type RateLimitResult =
  | { readonly ok: true; readonly tokens: number }
  | {
      readonly ok: false;
      readonly tokens: number;
      /** ms until `n` tokens are available (> 0). */ readonly retryAfter: number;
    };

export interface RateLimitStore {
  /** Atomically take `n` tokens if available (starts full, refills continuously). */
  take(key: StateKey, params: RateLimitParams, now: number, n?: number): MaybePromise<RateLimitResult>;
  /** Tokens available now (fractional). */
  tokens(key: StateKey, params: RateLimitParams, now: number): MaybePromise<number>;
  reset(key: StateKey): MaybePromise<void>;
  evict?(key: StateKey): void;
}

// ---------------------------------------------------------------------------------------------------------------
// Latency digest (AIMD quantile signal)

export interface DigestParams {
  /** The quantile to estimate, in (0, 1). */
  readonly quantile: number;
  /** Samples per epoch: the estimate is read from the previous full epoch, so old latency ages out. */
  readonly window: number;
}

export interface LatencyDigestStore {
  /** Add one latency sample (ms), then return the current estimate (undefined while warming). */
  observe(
    key: StateKey,
    params: DigestParams,
    latency: number,
    now: number,
  ): MaybePromise<number | undefined>;
  read(key: StateKey, params: DigestParams, now: number): MaybePromise<number | undefined>;
  /** Open a fresh epoch (after a backoff): the estimate warms up again. */
  reset(key: StateKey, now: number): MaybePromise<void>;
  evict?(key: StateKey): void;
}

/** The stores a `Resilience` uses; each missing one defaults to its in-memory implementation. */
export interface ResilienceStores {
  readonly circuitBreaker?: CircuitBreakerStore;
  readonly rateLimit?: RateLimitStore;
  readonly latencyDigest?: LatencyDigestStore;
  /**
   * Standing operator overrides shared by a fleet (SPEC §14.1): with one, `admin` actions reach every replica
   * sharing it. Default: a store of this `Resilience`'s own (a fleet of one).
   */
  readonly control?: ControlStore;
}
