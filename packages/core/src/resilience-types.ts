import type { Clock, Random } from './time/clock';
import type { ExceptionKind } from './errors/resilience-error';
import type { ResilienceStores } from './stores/ports';
import type { ResilienceStateSnapshot } from './admin/snapshot';
import type { AdminActionOptions, ForceOpenOptions, RetuneOptions } from './admin/admin-arguments';
import type { AuditEntry, ReplicaRecord } from './control/control-store';
import type { PolicyMode } from './policy/policy-mode';
import type { ChaosPatch } from './admin/chaos-patch';

/** What the user function receives (SPEC §4). `signal` is created lazily on first read. */
export interface CallContext {
  /** Aborted on attempt timeout, deadline expiry, a lost hedge race, or the caller's own signal. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt of a logical call; each hedged attempt counts its own (SPEC §11.8). */
  readonly attempt: number;
  readonly policy: string;
  readonly route: string | undefined;
}

export type Fallback<T> = (error: unknown, ctx: CallContext) => T | Promise<T>;

export interface RunOptions<T> {
  /** Name of a registered policy (built-ins: 'transient', 'occ'). */
  readonly policy: string;
  /** Partitions per-key state (breaker, bucket, limits) within the policy. */
  readonly route?: string | undefined;
  /** The caller's cancellation; `run` rejects at once with its reason when it aborts. */
  readonly signal?: AbortSignal | undefined;
  /** Wins over the policy's fallback (SPEC §11.11). */
  readonly fallback?: Fallback<T> | undefined;
  /** Set false to skip the policy's hedge for this call (non-idempotent work). Default true. */
  readonly hedge?: boolean | undefined;
}

/** Extends the default classification; return undefined to defer to it. */
export type Classifier = (error: unknown) => ExceptionKind | undefined;

/**
 * The control plane (SPEC §6, §14.1). Every method returns a Promise because stores may be remote. With a shared
 * control store (`stores.control`), the actions reach every replica (default `scope: 'fleet'`); `{ scope: 'local' }`
 * acts on this replica only. Without one, this process is a fleet of one.
 */
export interface ResilienceAdmin {
  /** Snapshots carry each policy's `version`. */
  inspect(filter?: { policy?: string }): Promise<ResilienceStateSnapshot[]>;
  /** No route: every route of the policy, including ones first seen later. With `ttl`, it clears itself. */
  forceOpen(policy: string, route?: string, options?: ForceOpenOptions): Promise<void>;
  clearForcedOpen(policy: string, route?: string, options?: AdminActionOptions): Promise<void>;
  resetBreaker(policy: string, route?: string, options?: AdminActionOptions): Promise<void>;
  /**
   * Validates first (a ResiliencePolicy or its JSON spec), then hot-swaps the policy of that name. A fleet retune
   * adds 1 to the policy's version (0 as configured); with `ifVersion` it is compare-and-set (`version_conflict`).
   */
  retune(policyOrSpec: unknown, options?: RetuneOptions): Promise<{ policy: string; version: number }>;
  /**
   * Switches a policy between `'enforce'` and `'shadow'` (SPEC §14.3) at run time, fleet-wide by default. The mode
   * set here outlives retunes; set `'enforce'` to go back.
   */
  setMode(policy: string, mode: PolicyMode, options?: AdminActionOptions): Promise<void>;
  /**
   * Changes a policy's chaos injection at run time (SPEC §14.3), fleet-wide by default: `enabled`, and each
   * injection as data (`fault: { rate, message? }`, `latency: { rate, delay }`, `outcome: { rate, value? }`;
   * `null` removes one). A patch changes only what it names; the settings outlive retunes.
   */
  setChaos(policy: string, patch: ChaosPatch, options?: AdminActionOptions): Promise<void>;
  /** Names of all registered policies (built-ins included). */
  policies(): Promise<string[]>;
  /** The replicas sharing the control store whose heartbeat has not expired (this one alone without one). */
  replicas(): Promise<ReplicaRecord[]>;
  /** The audit trail, newest first (default 100 entries, at most 1000). */
  audit(options?: { limit?: number }): Promise<AuditEntry[]>;
}

export type { Clock, Random, ResilienceStores };
