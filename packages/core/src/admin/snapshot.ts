import type { PolicyMode } from '../policy/policy-mode';
import type { StoreName } from '../events';
import type { BreakerState } from '../stores/ports';
import type { ChaosSettingsView } from '../strategies/chaos-strategy';

/** One `(policy, route)` as the control plane sees it (SPEC §6). Absent fields: that strategy is not in the policy. */
export interface ResilienceStateSnapshot {
  readonly policy: string;
  readonly route: string | undefined;
  readonly forcedOpen: boolean;
  /** The policy's version: 0 as configured, +1 for each fleet retune (SPEC §14.1). */
  readonly version: number;
  /** `'shadow'`: the policy's decisions are reported, not enforced (SPEC §14.3). */
  readonly mode: PolicyMode;
  /**
   * `failureRatio` and `calls`: closed, over the rolling window now; open and half-open, of the outcomes that last
   * opened the breaker (the window that tripped it, or the half-open period's probes when a probe failed), frozen
   * until it closes. `retryAfter`: open only, ms until the break ends and the next call may probe (relative, so a
   * store on another clock — the Redis server's — reads right); absent when the store does not report it.
   */
  readonly breaker?: {
    readonly state: BreakerState;
    readonly failureRatio: number;
    readonly calls: number;
    readonly retryAfter?: number;
  };
  readonly concurrencyLimit?: number;
  readonly inUse?: number;
  readonly waiting?: number;
  readonly hedgeDelay?: number;
  readonly rateLimitTokens?: number;
  readonly throttleRejectionProbability?: number;
  /**
   * The policy's chaos settings in force (SPEC §14.3: its `ChaosStrategy`, or what `admin.setChaos` set); absent
   * when it has none. See `chaosSettingsOf`.
   */
  readonly chaos?: ChaosSettingsView;
  /**
   * The stores that failed while this snapshot was taken: their fields (`breaker`, `rateLimitTokens`) show this
   * process's own local state instead, which a fleet sharing the store may not agree with. Absent when every store
   * answered.
   */
  readonly localFallback?: readonly StoreName[];
}
