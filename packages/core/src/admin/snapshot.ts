import type { StoreName } from '../events';
import type { BreakerState } from '../stores/ports';

/** One `(policy, route)` as the control plane sees it (SPEC §6). Absent fields: that strategy is not in the policy. */
export interface ResilienceStateSnapshot {
  readonly policy: string;
  readonly route: string | undefined;
  readonly forcedOpen: boolean;
  readonly breaker?: { readonly state: BreakerState; readonly failureRatio: number; readonly calls: number };
  readonly concurrencyLimit?: number;
  readonly inUse?: number;
  readonly waiting?: number;
  readonly hedgeDelay?: number;
  readonly rateLimitTokens?: number;
  readonly throttleRejectionProbability?: number;
  /**
   * The stores that failed while this snapshot was taken: their fields (`breaker`, `rateLimitTokens`) show this
   * process's own local state instead, which a fleet sharing the store may not agree with. Absent when every store
   * answered.
   */
  readonly localFallback?: readonly StoreName[];
}
