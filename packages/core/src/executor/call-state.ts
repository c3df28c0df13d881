import type { ResilienceError } from '../errors/resilience-error';
import type { CallContext } from '../resilience-types';
import type { Clock } from '../time/clock';
import type { Engine } from './engine';
import type { Lane } from './lane';
import type { KeyState, PolicyRuntime } from './policy-runtime';

/**
 * What the stages of a call read and call on the call they serve. `Invocation` implements it; the stages import this
 * interface, never `Invocation`, so the executor is a one-way chain, each stage in its own file and depending only on
 * the ones after it (tools/check-layers.mjs refuses an import cycle):
 * invocation → call-fallback | hedge → pipeline (rate limit) → admit-bulkhead → admit-breaker (breaker | throttle)
 * → attempts (timeout, retry, chaos) → pass-end (release, exactly once); refusal.ts and store-call.ts are the
 * refusal (or, in shadow mode, the report) and the remote-store wait the admissions share.
 */
export interface CallState extends Lane {
  readonly engine: Engine;
  readonly pr: PolicyRuntime;
  readonly ks: KeyState;
  readonly fn: (ctx: CallContext) => unknown;
  readonly policyName: string;
  readonly route: string | undefined;
  /** Absolute deadline on the engine clock, if the call runs under `withDeadline`. */
  readonly deadline: number | undefined;
  /** The ambient deadline as bound (with its own clock), passed on unchanged to the attempt frames. */
  readonly frameDeadline: number | undefined;
  readonly frameClock: Clock | undefined;
  readonly criticality: number | undefined;
  /** Whether anything can cancel the call from outside (caller signal, deadline, hedge). */
  readonly cancellable: boolean;
  /** Whether attempts run in a context frame of their own (see Invocation.framed). */
  readonly framed: boolean;
  /** The policy ran in shadow mode when the call started (SPEC §14.3): decisions are reported, not enforced. */
  readonly shadow: boolean;
  /** Set when the caller's signal or the deadline ended the call. */
  readonly callerCancelled: boolean;
  /** Hedged lanes besides the call's own. */
  lanes: Lane[] | undefined;
  /** The `attempt_timeout` error of attempt `attempt` (and its event). */
  attemptTimeout(attempt: number, timeout: number): ResilienceError;
  /** Reports a decision shadow mode does not enforce: a `rejected` event with `shadow: true`. */
  shadowRejected(error: ResilienceError): void;
}
