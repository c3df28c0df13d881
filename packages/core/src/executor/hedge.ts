import { ErrorCode, isOwnResilienceError, type ResilienceError } from '../errors/resilience-error';
import { stacklessError } from '../errors/stackless';
import type { CallState } from './call-state';
import { Lane } from './lane';
import { refuse } from './pass-end';
import { runPipeline } from './pipeline';
import { rejection } from './rejections';

/**
 * The abort reason a losing hedged attempt sees: distinct from a timeout or the caller's own reason. Built only
 * when there is a loser, and without a stack (it would only point into the executor; capturing one costs
 * microseconds, more than the rest of a hedged call).
 */
function hedgeLost(policy: string, route: string | undefined): ResilienceError {
  return stacklessError({
    kind: 'internal',
    code: 'hedge_lost',
    message: 'Another hedged attempt won',
    policy,
    ...(route === undefined ? {} : { route }),
  });
}

/** Refuses a hedged attempt of a key forced open (SPEC §6), with the `rejected` event a refusal emits. */
function forcedOpen(inv: CallState, lane: Lane): false {
  return refuse(inv, lane, rejection('infrastructure', ErrorCode.FORCED_OPEN, inv.policyName, inv.route));
}

/** The primary's attempts ended on their timeout: slowness, not a fast failure. */
function timedOut(inv: CallState): boolean {
  return isOwnResilienceError(inv.error) && inv.error.code === ErrorCode.ATTEMPT_TIMEOUT;
}

/** Current hedge delay: the observed quantile of primary latency, clamped, or the fixed delay until warm. */
export function hedgeDelayOf(inv: Pick<CallState, 'pr' | 'ks'>): number {
  const h = inv.pr.policy.hedge!.options;
  const q = inv.ks.hedgeLatency?.value();
  if (q === undefined) return h.delay;
  return Math.min(h.delayMax ?? Infinity, Math.max(h.delayMin ?? 0, q));
}

/**
 * Hedging (Dean & Barroso, "The Tail at Scale", 2013): when the primary is still running after the delay, start
 * another attempt through the same pipeline, up to `maxAttempts`; the first success wins and the others are aborted.
 * Hedges fire on slowness only — a failure never triggers one: each fires when the attempt started last has run for
 * the delay, while some attempt still runs (a primary failing meanwhile leaves the schedule as it was; failures are
 * the retry's, inside each pass) — and when every started attempt has failed, the last error is the call's.
 */
export function runHedged(inv: CallState): Promise<boolean> {
  const e = inv.engine;
  const h = inv.pr.policy.hedge!.options;
  const delay = hedgeDelayOf(inv);
  const lanes: Lane[] = [];
  inv.lanes = lanes;
  const started = e.clock.now();
  return new Promise<boolean>((resolve) => {
    let running = 0;
    let launched = 1;
    let finished = false;
    let timer: unknown;
    let last: Lane = inv;

    const finish = (winner: Lane | undefined): void => {
      finished = true;
      if (timer !== undefined) e.clock.clearTimeout(timer);
      timer = undefined;
      const reason =
        winner === undefined || lanes.length === 0 ? undefined : hedgeLost(inv.policyName, inv.route);
      if (winner !== undefined && reason !== undefined) {
        if (winner !== inv) inv.cancel(reason);
        for (const l of lanes) if (l !== winner) l.cancel(reason);
      }
      if (winner === undefined) {
        if (last !== inv) {
          inv.error = last.error;
          inv.rejected = last.rejected;
        }
        resolve(false);
        return;
      }
      if (winner !== inv) {
        inv.value = winner.value;
        if (e.listening) {
          e.emit({
            type: 'hedge_won',
            policy: inv.policyName,
            route: inv.route,
            attempt: lanes.indexOf(winner) + 2,
          });
        }
      }
      resolve(true);
    };

    const launch = (lane: Lane, pass: Promise<boolean>): void => {
      running++;
      void pass.then((ok) => {
        running--;
        // The delay learns how long a primary takes to *succeed* (hedges fire on slowness, not failure): a fast
        // failure or rejection is no latency sample, or a failing dependency would pull the delay down and hedge
        // harder. A primary that lost the race, or timed out, was at least this slow: a lower bound, kept.
        if (lane === inv && !inv.callerCancelled && (ok || finished || timedOut(inv)))
          inv.ks.hedgeLatency?.add(e.clock.now() - started);
        if (finished) return;
        if (ok) return finish(lane);
        last = lane;
        if (running === 0) finish(undefined);
      });
    };

    const fire = (): void => {
      timer = undefined;
      if (finished || inv.callerCancelled) return;
      // A hedge is a new request to the dependency: one due after an operator forced the key open is refused before
      // any strategy, as the call itself would be (and as an open breaker refuses it), spending no budget token
      // (an exhausted budget still means no hedge at all); the attempts running go on.
      const forced = inv.ks.forcedNow();
      const budget = inv.ks.hedgeBudget;
      if (budget !== undefined && !(forced ? budget.canWithdraw : budget.tryWithdraw())) return;
      const lane = new Lane();
      lanes.push(lane);
      launched++;
      if (e.listening)
        e.emit({ type: 'hedge_attempt', policy: inv.policyName, route: inv.route, attempt: launched, delay });
      launch(lane, forced ? Promise.resolve(forcedOpen(inv, lane)) : runPipeline(inv, lane));
      if (launched < h.maxAttempts) timer = e.clock.setTimeout(fire, delay);
    };

    launch(inv, runPipeline(inv, inv));
    if (!finished && h.maxAttempts > 1) timer = e.clock.setTimeout(fire, delay);
  });
}
