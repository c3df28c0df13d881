import type { BreakerState, BreakerTransition } from './stores/ports';
import type { ExceptionKind } from './errors/resilience-error';
import type { ControlAction } from './control/control-store';

/** How a call ended, from the caller's point of view (metrics use the same four values, SPEC §8). */
export type CallOutcome = 'success' | 'failure' | 'rejected' | 'cancelled';

/** What a chaos strategy injected into an attempt (SPEC §14.3). */
export type ChaosInjection = 'fault' | 'latency' | 'outcome';

/** Which store port degraded. `control`: the control store (SPEC §14.1); its events carry `policy: ''`. */
export type StoreName = 'circuitBreaker' | 'rateLimit' | 'latencyDigest' | 'control';

interface EventBase {
  readonly policy: string;
  readonly route: string | undefined;
}

/**
 * On the events of a decision: `true` when the policy runs in shadow mode (SPEC §14.3), where the decision is
 * reported but not enforced (the call was not rejected, aborted, retried or replaced). Absent in enforce mode.
 */
interface Shadowed {
  readonly shadow?: true;
}

/**
 * Every event Ballast emits, one union discriminated by `type` (SPEC §5, §11.12). Events are built only when
 * someone listens, so an application with no listener pays nothing.
 */
export type ResilienceEvent =
  | (EventBase & {
      readonly type: 'call';
      readonly outcome: CallOutcome;
      /** ms on the Resilience clock, from run() to settlement. */
      readonly duration: number;
      /** The Ballast code when rejected; the error kind otherwise when failed. Never on success or cancelled. */
      readonly code?: string;
    })
  | (EventBase &
      Shadowed & { readonly type: 'rejected'; readonly code: string; readonly retryAfter?: number })
  | (EventBase &
      Shadowed & {
        readonly type: 'retry';
        /** The attempt about to start (2 for the first retry). */
        readonly attempt: number;
        readonly delay: number;
        readonly error: unknown;
      })
  | (EventBase &
      Shadowed & { readonly type: 'attempt_timeout'; readonly attempt: number; readonly timeout: number })
  | (EventBase & {
      readonly type: 'breaker_state';
      readonly from: BreakerState;
      readonly to: BreakerState;
      /**
       * On a move to `open` (when the store reports it; both built-in stores do): `failures / calls` of the outcomes
       * that opened it. From closed: the rolling window at the trip. From half-open: that period's reported probes,
       * the failing one included (`calls` = successes + 1, `failureRatio` = 1 / calls).
       */
      readonly failureRatio?: number;
      /** The number of calls counted in `failureRatio`; present with it. */
      readonly calls?: number;
    })
  | (EventBase & Shadowed & { readonly type: 'throttle_reject'; readonly probability: number })
  | (EventBase & { readonly type: 'bulkhead_limit'; readonly limit: number })
  | (EventBase & { readonly type: 'bulkhead_shed'; readonly criticality: number; readonly sojourn: number })
  | (EventBase & { readonly type: 'hedge_attempt'; readonly attempt: number; readonly delay: number })
  | (EventBase & { readonly type: 'hedge_won'; readonly attempt: number })
  | (EventBase &
      Shadowed & { readonly type: 'fallback'; readonly error: unknown; readonly kind: ExceptionKind })
  | (EventBase & { readonly type: 'store_degraded'; readonly store: StoreName; readonly error: unknown })
  | (EventBase &
      Shadowed & {
        readonly type: 'chaos_injected';
        readonly injection: ChaosInjection;
        /** The attempt it was injected into (`ctx.attempt`). */
        readonly attempt: number;
        /** `latency` only: the injected delay (ms). */
        readonly delay?: number;
      })
  | (EventBase & {
      readonly type: 'control_applied';
      /** The admin method whose change this replica applied (SPEC §14.1). */
      readonly action: ControlAction;
      /** `fleet`: from the control store (this replica's own write included); `local`: a `{ scope: 'local' }` call. */
      readonly scope: 'fleet' | 'local';
      /** A force-open whose ttl ended. */
      readonly expired?: true;
      /** `retune`: the policy version now in force. */
      readonly version?: number;
    });

export type ResilienceEventType = ResilienceEvent['type'];
export type ResilienceListener = (event: ResilienceEvent) => void;

/** Exported names, so nobody types event strings by hand. */
export const EventType = Object.freeze({
  CALL: 'call',
  REJECTED: 'rejected',
  RETRY: 'retry',
  ATTEMPT_TIMEOUT: 'attempt_timeout',
  BREAKER_STATE: 'breaker_state',
  THROTTLE_REJECT: 'throttle_reject',
  BULKHEAD_LIMIT: 'bulkhead_limit',
  BULKHEAD_SHED: 'bulkhead_shed',
  HEDGE_ATTEMPT: 'hedge_attempt',
  HEDGE_WON: 'hedge_won',
  FALLBACK: 'fallback',
  STORE_DEGRADED: 'store_degraded',
  CONTROL_APPLIED: 'control_applied',
  CHAOS_INJECTED: 'chaos_injected',
} as const satisfies Record<string, ResilienceEventType>);

/** The `breaker_state` event of a store's transition, with what opened the breaker when the store says. */
export function breakerStateEvent(
  policy: string,
  route: string | undefined,
  t: BreakerTransition,
): ResilienceEvent {
  const { from, to, failureRatio, calls } = t;
  return failureRatio === undefined || calls === undefined
    ? { type: 'breaker_state', policy, route, from, to }
    : { type: 'breaker_state', policy, route, from, to, failureRatio, calls };
}
