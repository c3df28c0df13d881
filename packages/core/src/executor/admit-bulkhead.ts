import { Criticality } from '@ballast/codel';
import { isParked, type Admission, type ParkedAdmission } from '../bulkhead';
import { admitBreaker } from './admit-breaker';
import type { CallState } from './call-state';
import type { Lane } from './lane';
import { cancelled, crash, end, refuse, resumeSoon } from './pass-end';
import { refuseOr } from './refusal';

/** 2. Bulkhead: a free slot is taken synchronously; otherwise the lane parks (interruptibly) or is refused. */
export function admitBulkhead(inv: CallState, lane: Lane, now: number): void {
  const bh = inv.ks.bulkhead;
  if (bh === undefined) return admitBreaker(inv, lane, now);
  const a = bh.acquire(inv.criticality ?? Criticality.NORMAL, inv.deadline);
  if (a === true) return holdSlot(inv, lane, now);
  if (isParked(a)) return inv.shadow ? shadowPark(inv, lane, a, now) : park(inv, lane, a);
  refuseOr(inv, lane, a);
}

/**
 * Shadow mode: the call does not wait for a slot, but its place in the queue is kept while it runs, so the queue
 * fills, sheds and times out as it would in enforce mode, and later arrivals are judged against it. A grant while
 * the call runs makes it hold the slot from then on; a refusal is reported; the end of the call leaves the queue.
 */
function shadowPark(inv: CallState, lane: Lane, parked: ParkedAdmission, now: number): void {
  lane.shadowPark = parked;
  parked.result.then((a: Admission) => {
    if (lane.shadowPark !== parked) return; // the pass ended or detached first (cancel() gave back any slot)
    lane.shadowPark = undefined;
    if (a === true) {
      lane.holdsSlot = true;
      lane.admittedAt = inv.engine.clock.now();
    } else inv.shadowRejected(a);
  });
  admitBreaker(inv, lane, now);
}

function holdSlot(inv: CallState, lane: Lane, now: number): void {
  lane.holdsSlot = true;
  lane.admittedAt = now;
  admitBreaker(inv, lane, now);
}

/** Waits in the bulkhead queue; a cancellation leaves the queue at once (the waiter then owns nothing). */
function park(inv: CallState, lane: Lane, parked: ParkedAdmission): void {
  if (lane.cancelled) {
    parked.cancel();
    return end(inv, lane, cancelled(lane));
  }
  let waiting = true;
  lane.wake = () => {
    waiting = false;
    parked.cancel();
    resumeSoon(inv, lane, () => end(inv, lane, cancelled(lane)));
  };
  parked.result.then((a: Admission) => {
    if (!waiting) return; // cancelled meanwhile (cancel() gave back any slot)
    waiting = false;
    lane.wake = undefined;
    try {
      if (a === true) holdSlot(inv, lane, inv.engine.clock.now());
      else end(inv, lane, refuse(inv, lane, a));
    } catch (err) {
      crash(inv, lane, err);
    }
  });
}
