import { ErrorCode } from '../errors/resilience-error';
import { outcomeClass } from '../errors/outcome-class';
import type { BreakerAdmission, BreakerOutcome } from '../stores/ports';
import { breakerStateEvent } from '../events';
import { isPromiseLike, type Engine } from './engine';
import type { KeyState, PolicyRuntime } from './policy-runtime';
import { rejection } from './rejections';

/** The admission of one stream: report how it ended exactly once (later reports are ignored). */
export interface StreamPermit {
  /**
   * `error` undefined: the stream completed. `cancelled`: the consumer stopped early, which says nothing about the
   * dependency's health (a probe lease is given back, nothing is recorded).
   */
  settle(error?: unknown, cancelled?: boolean): void;
}

/**
 * Breaker-only admission for long-lived work that cannot be retried, timed out or hedged: streams (SPEC §9, async
 * generators and server-sent events). Opening is refused while forced open or while the breaker is open; how the
 * stream ends is one breaker outcome. Rate limit, bulkhead, retry, timeout and hedge never apply. Events are the same
 * as for `run`: `rejected`, `breaker_state`, `store_degraded`, and one `call` when the permit settles.
 */
export async function admitStream(engine: Engine, pr: PolicyRuntime, ks: KeyState): Promise<StreamPermit> {
  const e = engine;
  const policy = pr.policy.name;
  const route = ks.key.route;
  const started = e.clock.now();
  const shadow = pr.shadow;
  /** Throws the refusal; in shadow mode (SPEC §14.3) reports it and returns: the stream opens anyway. */
  const refuse = (code: string, retryAfter?: number, cause?: unknown): void => {
    const err = rejection('infrastructure', code, policy, route, retryAfter, cause);
    if (shadow) {
      if (e.listening)
        e.emit({
          type: 'rejected',
          policy,
          route,
          code,
          ...(retryAfter === undefined ? {} : { retryAfter }),
          shadow,
        });
      return;
    }
    if (e.listening) {
      e.emit({ type: 'rejected', policy, route, code });
      e.emit({ type: 'call', policy, route, outcome: 'rejected', duration: 0, code });
    }
    throw err;
  };
  // Counted as a running stream from the start, not only once admitted: the key must not be evicted while a remote
  // store decides, and a refusal then gives it back through `release`, which tells the eviction sweep that the key
  // may be idle (else keys of refused streams escaped the sweep and the map grew past maxKeysPerPolicy).
  ks.inflight++;
  ks.streams++;
  const bp = pr.breakerParams;
  let local = e.breakerStore === e.breakerLocal;
  let adm: BreakerAdmission | undefined;
  try {
    if (ks.forcedOpen || pr.forcedAll) refuse(ErrorCode.FORCED_OPEN);
    if (bp !== undefined) {
      try {
        const r = (local ? e.breakerLocal : e.breakerStore).acquire(ks.key, bp, started);
        adm = isPromiseLike(r) ? await r : r;
      } catch (err) {
        if (e.listening)
          e.emit({ type: 'store_degraded', policy, route, store: 'circuitBreaker', error: err });
        if (!pr.policy.failOpenOnStoreError) refuse(ErrorCode.STORE_UNAVAILABLE, undefined, err);
        local = true;
        adm = e.breakerLocal.acquire(ks.key, bp, e.clock.now()) as BreakerAdmission;
      }
      if (adm.transition !== undefined && e.listening)
        e.emit(breakerStateEvent(policy, route, adm.transition));
      ks.sawBreaker(adm.state);
      if (!adm.admitted) refuse(ErrorCode.CIRCUIT_OPEN, adm.retryAfter);
    }
  } catch (err) {
    ks.streams--;
    ks.release();
    throw err;
  }
  const permit = adm?.admitted ? { generation: adm.generation, lease: adm.lease } : undefined;
  let settled = false;
  return {
    settle(error?: unknown, cancelled = false): void {
      if (settled) return;
      settled = true;
      ks.streams--;
      ks.release();
      const cls = cancelled
        ? 'cancelled'
        : error === undefined
          ? 'healthy'
          : outcomeClass(e.classify(error), false);
      if (e.listening) {
        const outcome = cls === 'healthy' ? 'success' : cls === 'cancelled' ? 'cancelled' : 'failure';
        const duration = e.clock.now() - started;
        e.emit(
          outcome === 'failure'
            ? { type: 'call', policy, route, outcome, duration, code: e.classify(error) }
            : { type: 'call', policy, route, outcome, duration },
        );
      }
      if (bp === undefined || permit === undefined) return;
      const outcome: BreakerOutcome =
        cls === 'failure' ? 'failure' : cls === 'healthy' ? 'success' : 'release';
      const store = local ? e.breakerLocal : e.breakerStore;
      const onError = (err: unknown): void => {
        if (e.listening)
          e.emit({ type: 'store_degraded', policy, route, store: 'circuitBreaker', error: err });
      };
      try {
        const r = store.record(ks.key, bp, permit, outcome, e.clock.now());
        const apply = (res: {
          state: typeof ks.breakerState;
          transition: BreakerAdmission['transition'];
        }): void => {
          ks.sawBreaker(res.state);
          if (res.transition !== undefined && e.listening)
            e.emit(breakerStateEvent(policy, route, res.transition));
        };
        if (isPromiseLike(r)) r.then(apply, onError);
        else apply(r);
      } catch (err) {
        onError(err);
      }
    },
  };
}
