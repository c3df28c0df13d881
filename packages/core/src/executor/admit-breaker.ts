import { ErrorCode } from '../errors/resilience-error';
import type { BreakerAdmission } from '../stores/ports';
import { attempt } from './attempts';
import { breakerTransition, recordBreaker } from './breaker-outcome';
import type { CallState } from './call-state';
import { isPromiseLike } from './engine';
import type { Lane } from './lane';
import { cancelled, end } from './pass-end';
import { rejection } from './rejections';
import { refuseOr } from './refusal';
import { later, remote } from './store-call';

/** 3. Circuit breaker or adaptive throttle around the retry loop: one logical call is one outcome. */
export function admitBreaker(inv: CallState, lane: Lane, now: number): void {
  const e = inv.engine;
  const bp = inv.pr.breakerParams;
  if (bp !== undefined) {
    const key = inv.ks.key;
    if (e.breakerStore === e.breakerLocal)
      return afterBreaker(inv, lane, e.breakerLocal.acquire(key, bp, now), true, now);
    lane.degraded = false;
    return remote(
      inv,
      lane,
      e.breakerStore,
      e.breakerLocal,
      'circuitBreaker',
      (s) => s.acquire(key, bp, e.clock.now()),
      // a probe lease granted after the lane was cancelled is handed straight back
      (late) => {
        if (late.admitted && late.lease !== undefined)
          recordBreaker(inv, false, late, 'release', e.clock.now());
      },
      (adm) => afterBreaker(inv, lane, adm, lane.degraded, undefined),
    );
  }
  const throttle = inv.ks.throttle;
  if (throttle !== undefined) {
    const p = throttle.rejectionProbability(now);
    if (p > 0 && throttle.shouldReject(now, e.random())) {
      const shadow = inv.shadow;
      if (e.listening) {
        const event = {
          type: 'throttle_reject',
          policy: inv.policyName,
          route: inv.route,
          probability: p,
        } as const;
        e.emit(shadow ? { ...event, shadow } : event);
      }
      const err = rejection('throttled', ErrorCode.ADAPTIVE_THROTTLE, inv.policyName, inv.route);
      return refuseOr(inv, lane, err);
    }
    lane.holdsThrottle = true;
  }
  attempt(inv, lane, 1, now);
}

function afterBreaker(
  inv: CallState,
  lane: Lane,
  adm: BreakerAdmission | Promise<BreakerAdmission>,
  local: boolean,
  now: number | undefined,
): void {
  if (isPromiseLike(adm)) return later(inv, lane, adm, (v) => afterBreaker(inv, lane, v, local, undefined));
  if (adm.transition !== undefined) breakerTransition(inv, adm.transition);
  inv.ks.sawBreaker(adm.state);
  if (!adm.admitted) {
    const err = rejection(
      'infrastructure',
      ErrorCode.CIRCUIT_OPEN,
      inv.policyName,
      inv.route,
      adm.retryAfter,
    );
    return refuseOr(inv, lane, err);
  }
  lane.holdsPermit = true;
  lane.generation = adm.generation;
  lane.lease = adm.lease;
  lane.permitLocal = local;
  if (lane.cancelled) return end(inv, lane, cancelled(lane));
  attempt(inv, lane, 1, now);
}
