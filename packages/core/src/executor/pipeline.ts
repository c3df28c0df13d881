import { ErrorCode } from '../errors/resilience-error';
import type { RateLimitResult } from '../stores/ports';
import { admitBulkhead } from './admit-bulkhead';
import type { CallState } from './call-state';
import { isPromiseLike } from './engine';
import type { Lane, PassDone } from './lane';
import { cancelled, crash, end } from './pass-end';
import { rejection } from './rejections';
import { refuseOr } from './refusal';
import { later, remote } from './store-call';

/**
 * The pipeline of one lane, outer → inner: rate limit → bulkhead → circuit breaker | adaptive throttle → retry →
 * timeout (SPEC §4). Each stage is skipped at no cost when the policy lacks it.
 *
 * Written in continuation-passing style rather than as an async function: with in-process stores every admission
 * step is synchronous, and the only promise work of a call is the user function's own promise plus the one the
 * caller awaits. Each `async` layer would add a promise and a microtask hop per call — and on Node 20, once
 * AsyncLocalStorage is on, a promise hook per promise (peer-overhead.md §5). `done(ok, lane)` is called exactly
 * once, after everything the pass took is given back.
 */
export function runPass(inv: CallState, lane: Lane, done: PassDone, now = inv.engine.clock.now()): void {
  lane.done = done;
  try {
    admitRate(inv, lane, now);
  } catch (err) {
    crash(inv, lane, err);
  }
}

/** The pass as a promise of its `ok` (hedging races several). */
export function runPipeline(inv: CallState, lane: Lane): Promise<boolean> {
  return new Promise<boolean>((resolve) => runPass(inv, lane, resolve));
}

/** 1. Rate limit: rejects at once, before a bulkhead slot or a breaker outcome is touched. */
function admitRate(inv: CallState, lane: Lane, now: number): void {
  const e = inv.engine;
  const rp = inv.pr.rateParams;
  if (rp === undefined) return admitBulkhead(inv, lane, now);
  const key = inv.ks.key;
  if (e.rateStore === e.rateLocal) return afterRate(inv, lane, e.rateLocal.take(key, rp, now), now);
  remote(
    inv,
    lane,
    e.rateStore,
    e.rateLocal,
    'rateLimit',
    (s) => s.take(key, rp, e.clock.now()),
    undefined,
    (r) => afterRate(inv, lane, r, e.clock.now()),
  );
}

function afterRate(
  inv: CallState,
  lane: Lane,
  r: RateLimitResult | Promise<RateLimitResult>,
  now: number,
): void {
  if (isPromiseLike(r)) return later(inv, lane, r, (v) => afterRate(inv, lane, v, inv.engine.clock.now()));
  if (!r.ok) {
    const err = rejection('throttled', ErrorCode.RATE_LIMITED, inv.policyName, inv.route, r.retryAfter);
    return refuseOr(inv, lane, err);
  }
  if (lane.cancelled) return end(inv, lane, cancelled(lane));
  admitBulkhead(inv, lane, now);
}
