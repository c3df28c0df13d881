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

// ---------------------------------------------------------------------------------------------------------------
// Control store (SPEC §14.1)

export interface ControlStateShape {
  readonly seq: number;
  readonly forced: readonly {
    readonly policy: string;
    readonly route: string | undefined;
    readonly remaining?: number;
    readonly reason?: string;
    readonly actor?: string;
    readonly seq: number;
  }[];
  readonly policies: readonly { readonly policy: string; readonly version: number; readonly spec: unknown }[];
  readonly resets: readonly {
    readonly policy: string;
    readonly route: string | undefined;
    readonly seq: number;
  }[];
  readonly settings: readonly {
    readonly policy: string;
    readonly action: 'setMode' | 'setChaos';
    readonly value: unknown;
    readonly seq: number;
  }[];
}

export type ControlChangeShape = (
  | { readonly action: 'forceOpen'; readonly ttl?: number | undefined }
  | { readonly action: 'clearForcedOpen' }
  | { readonly action: 'resetBreaker' }
  | { readonly action: 'retune'; readonly spec: unknown; readonly ifVersion?: number | undefined }
  | { readonly action: 'setMode' | 'setChaos'; readonly value: unknown }
) & {
  readonly policy: string;
  readonly route?: string | undefined;
  readonly reason?: string | undefined;
  readonly actor?: string | undefined;
  readonly replica: string;
};

export type ControlWriteResultShape =
  | { readonly ok: true; readonly seq: number; readonly version?: number }
  | { readonly ok: false; readonly version: number };

export interface AuditEntryShape {
  readonly at: number;
  readonly action: string;
  readonly policy: string;
  readonly route?: string;
  readonly scope: 'fleet' | 'local';
  readonly actor?: string;
  readonly reason?: string;
  readonly spec?: unknown;
  readonly value?: unknown;
  readonly version?: number;
  readonly ttl?: number;
  readonly replica?: string;
}

export interface ReplicaRecordShape {
  readonly id: string;
  readonly startedAt: number;
  readonly version: number;
  readonly lastSeen: number;
}

export interface ControlStoreShape {
  read(now: number): MaybePromise<ControlStateShape>;
  seq(): MaybePromise<number>;
  write(change: ControlChangeShape, now: number): MaybePromise<ControlWriteResultShape>;
  record(entry: Omit<AuditEntryShape, 'at'>): MaybePromise<void>;
  audit(limit: number): MaybePromise<AuditEntryShape[]>;
  subscribe(onNotice: (seq: number) => void): MaybePromise<{ close(): MaybePromise<void> }>;
  heartbeat(replica: Omit<ReplicaRecordShape, 'lastSeen'>, ttl: number, now: number): MaybePromise<void>;
  leave(id: string): MaybePromise<void>;
  replicas(now: number): MaybePromise<ReplicaRecordShape[]>;
}
