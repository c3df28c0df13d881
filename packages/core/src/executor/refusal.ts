import type { ResilienceError } from '../errors/resilience-error';
import { attempt } from './attempts';
import type { CallState } from './call-state';
import type { Lane, PassDone } from './lane';
import { detach, end, refuse } from './pass-end';

/**
 * A refusal. In enforce mode it ends the pass; in shadow mode (SPEC §14.3) it is reported, the strategies' pass ends
 * as enforce mode would end it (what it holds is given back, judged a rejection), and fn runs bare.
 */
export function refuseOr(inv: CallState, lane: Lane, error: ResilienceError): void {
  if (!inv.shadow) return end(inv, lane, refuse(inv, lane, error));
  inv.shadowRejected(error);
  lane.error = error;
  lane.rejected = true;
  detach(inv, lane);
  attempt(inv, lane, 1);
}

/** Shadow mode: a call refused before any strategy (forced open) runs fn bare, once; `done` gets its result. */
export function runBare(inv: CallState, lane: Lane, done: PassDone): void {
  lane.done = done;
  lane.detached = true;
  attempt(inv, lane, 1);
}
