/**
 * The store ports of `@ballast/core`, declared structurally (SPEC §11.17: this package imports nothing from core,
 * so core's own tests can use the suites without a dependency cycle). Core's types are assignable to these; a
 * drift shows up as a type error in the specs that run the suites against core's and Redis's stores.
 */

export type MaybePromise<T> = T | Promise<T>;

export interface ConformanceKey {
  readonly policy: string;
  readonly route: string | undefined;
  readonly id: string;
}

export type BreakerStateName = 'closed' | 'open' | 'half_open';

export interface BreakerParamsShape {
  readonly failureRatio: number;
  readonly samplingWindow: number;
  readonly minThroughput: number;
  readonly breakDuration: number;
  readonly halfOpenMaxCalls: number;
  /** Growing breaks (optional in the port): the cap, and the factor per failed half-open period (default 2). */
  readonly maxBreakDuration?: number;
  readonly breakDurationMultiplier?: number;
}

export interface BreakerTransitionShape {
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
  /** On a move to open: failures / calls of what opened it (optional in the port; this suite requires them). */
  readonly failureRatio?: number;
  readonly calls?: number;
}

export type BreakerAdmissionShape =
  | {
      readonly admitted: true;
      readonly state: BreakerStateName;
      readonly generation: number;
      readonly lease: string | undefined;
      readonly transition: BreakerTransitionShape | undefined;
    }
  | {
      readonly admitted: false;
      readonly state: BreakerStateName;
      readonly retryAfter: number;
      readonly transition: BreakerTransitionShape | undefined;
    };

export interface CircuitBreakerStoreShape {
  acquire(key: ConformanceKey, params: BreakerParamsShape, now: number): MaybePromise<BreakerAdmissionShape>;
  record(
    key: ConformanceKey,
    params: BreakerParamsShape,
    permit: { readonly generation: number; readonly lease: string | undefined },
    outcome: 'success' | 'failure' | 'release',
    now: number,
  ): MaybePromise<{
    readonly state: BreakerStateName;
    readonly transition: BreakerTransitionShape | undefined;
  }>;
  inspect(
    key: ConformanceKey,
    params: BreakerParamsShape,
    now: number,
  ): MaybePromise<{
    readonly state: BreakerStateName;
    readonly failureRatio: number;
    readonly calls: number;
    readonly generation: number;
    /** Open only: ms until the break ends (optional in the port; this suite requires it). */
    readonly retryAfter?: number;
  }>;
  reset(key: ConformanceKey, now: number): MaybePromise<void>;
  evict?(key: ConformanceKey): void;
}

export interface RateLimitParamsShape {
  readonly permits: number;
  readonly per: number;
  readonly burst: number;
}

export type RateLimitResultShape =
  | { readonly ok: true; readonly tokens: number }
  | { readonly ok: false; readonly tokens: number; readonly retryAfter: number };

export interface RateLimitStoreShape {
  take(
    key: ConformanceKey,
    params: RateLimitParamsShape,
    now: number,
    n?: number,
  ): MaybePromise<RateLimitResultShape>;
  tokens(key: ConformanceKey, params: RateLimitParamsShape, now: number): MaybePromise<number>;
  reset(key: ConformanceKey): MaybePromise<void>;
  evict?(key: ConformanceKey): void;
}

export interface DigestParamsShape {
  readonly quantile: number;
  readonly window: number;
}

export interface LatencyDigestStoreShape {
  observe(
    key: ConformanceKey,
    params: DigestParamsShape,
    latency: number,
    now: number,
  ): MaybePromise<number | undefined>;
  read(key: ConformanceKey, params: DigestParamsShape, now: number): MaybePromise<number | undefined>;
  reset(key: ConformanceKey, now: number): MaybePromise<void>;
  evict?(key: ConformanceKey): void;
}
