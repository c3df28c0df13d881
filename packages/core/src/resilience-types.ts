import type { Clock, Random } from './time/clock';
import type { ExceptionKind } from './errors/resilience-error';
import type { ResilienceStores } from './stores/ports';
import type { ResilienceStateSnapshot } from './admin/snapshot';

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

/** The control plane (SPEC §6). Every method returns a Promise because stores may be remote. */
export interface ResilienceAdmin {
  inspect(filter?: { policy?: string }): Promise<ResilienceStateSnapshot[]>;
  /** No route: every route of the policy, including ones first seen later. */
  forceOpen(policy: string, route?: string): Promise<void>;
  clearForcedOpen(policy: string, route?: string): Promise<void>;
  resetBreaker(policy: string, route?: string): Promise<void>;
  /** Validates first (a ResiliencePolicy or its JSON spec), then hot-swaps the policy of that name. */
  retune(policyOrSpec: unknown): Promise<void>;
  /** Names of all registered policies (built-ins included). */
  policies(): Promise<string[]>;
}

export type { Clock, Random, ResilienceStores };
