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
}
