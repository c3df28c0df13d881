import { ErrorCode, ResilienceError } from '../errors/resilience-error';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { policyFromSpec } from '../policy/policy-spec';
import type { Engine } from '../executor/engine';
import { hedgeDelayOf } from '../executor/hedge';
import type { KeyState, PolicyRuntime } from '../executor/policy-runtime';
import type { StoreName } from '../events';
import { stateKey } from '../stores/ports';
import type { ResilienceAdmin } from '../resilience-types';
import { formatValue } from '../validation/options-validator';
import type { ResilienceStateSnapshot } from './snapshot';

/** What the control plane may touch of a `Resilience` (its registry of policy runtimes), and nothing else. */
export interface AdminHost {
  readonly engine: Engine;
  runtime(name: string): PolicyRuntime | undefined;
  runtimes(): PolicyRuntime[];
  replace(policy: ResiliencePolicy): void;
}

function unknownPolicy(name: unknown): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    code: ErrorCode.UNKNOWN_POLICY,
    message: `Unknown policy '${String(name)}'`,
    details: { policy: name },
  });
}

/**
 * Admin calls are driven by HTTP bodies, scripts and consoles: a route that is not a string (a number from a JSON
 * body, an object) would otherwise become a key of its own, and the operator's action would silently miss the
 * route they meant. One `configuration` error names each bad argument.
 */
function checkArguments(method: string, policy: unknown, route: unknown): void {
  const problems: string[] = [];
  if (typeof policy !== 'string') problems.push(`policy must be a policy name, got ${formatValue(policy)}`);
  if (route !== undefined && typeof route !== 'string')
    problems.push(`route must be a string or undefined, got ${formatValue(route)}`);
  if (problems.length > 0)
    throw new ResilienceError({
      kind: 'configuration',
      message: `Invalid admin.${method}() call: ${problems.join('; ')}`,
      details: { problems },
    });
}

/**
 * The keys an operation addresses: one route, or (no route) every route the policy has seen. A route this process
 * has not seen has no key, and none is created for it: clearing or resetting a route is no reason to hold state for
 * it, and creating one per call would let an operator's loop over routes evict the idle keys real traffic uses.
 */
function keysOf(pr: PolicyRuntime, route: string | undefined): KeyState[] {
  if (route === undefined) return [...pr.keys.values()];
  const ks = pr.keys.get(route);
  return ks === undefined ? [] : [ks];
}

export function createAdmin(host: AdminHost): ResilienceAdmin {
  const need = (name: string): PolicyRuntime => {
    const pr = host.runtime(name);
    if (pr === undefined) throw unknownPolicy(name);
    return pr;
  };

  const snapshot = async (pr: PolicyRuntime, ks: KeyState): Promise<ResilienceStateSnapshot> => {
    const e = host.engine;
    const now = e.clock.now();
    const policy = pr.policy;
    const key = ks.key;
    // A store that fails: the snapshot shows the process's own view and says so. No `store_degraded` event: that
    // counts errors calls survived, and a dashboard polling a down store would inflate it on every scrape.
    let fallback: StoreName[] | undefined;
    const degraded = (store: StoreName): void => {
      (fallback ??= []).push(store);
    };
    const bp = pr.breakerParams;
    const rp = pr.rateParams;
    // Both stores at once: a slow store costs one round trip per snapshot, not one per store.
    const [b, tokens] = await Promise.all([
      bp === undefined
        ? undefined
        : (async () => {
            try {
              return await e.breakerStore.inspect(key, bp, now);
            } catch {
              degraded('circuitBreaker');
              return e.breakerLocal.inspect(key, bp, now);
            }
          })(),
      rp === undefined
        ? undefined
        : (async () => {
            try {
              return await e.rateStore.tokens(key, rp, now);
            } catch {
              degraded('rateLimit');
              return e.rateLocal.tokens(key, rp, now);
            }
          })(),
    ]);
    const snap: {
      -readonly [K in keyof ResilienceStateSnapshot]: ResilienceStateSnapshot[K];
    } = { policy: policy.name, route: key.route, forcedOpen: ks.forcedOpen || pr.forcedAll };
    if (b !== undefined) {
      const { state, failureRatio, calls, retryAfter } = b;
      snap.breaker =
        state === 'open' && retryAfter !== undefined
          ? { state, failureRatio, calls, retryAfter }
          : { state, failureRatio, calls };
    }
    if (ks.bulkhead !== undefined) {
      snap.concurrencyLimit = ks.bulkhead.limit;
      snap.inUse = ks.bulkhead.inUse;
      snap.waiting = ks.bulkhead.waiting;
    }
    if (policy.hedge !== undefined) snap.hedgeDelay = hedgeDelayOf({ pr, ks });
    if (tokens !== undefined) snap.rateLimitTokens = tokens;
    if (ks.throttle !== undefined) snap.throttleRejectionProbability = ks.throttle.rejectionProbability(now);
    if (fallback !== undefined) snap.localFallback = fallback;
    return snap;
  };

  return Object.freeze({
    async inspect(filter: { policy?: string } = {}): Promise<ResilienceStateSnapshot[]> {
      if (typeof filter !== 'object' || filter === null)
        throw new ResilienceError({
          kind: 'configuration',
          message: `Invalid admin.inspect() call: filter must be an object ({ policy? }) or undefined, got ${formatValue(filter)}`,
        });
      if (filter.policy !== undefined) checkArguments('inspect', filter.policy, undefined);
      const runtimes = filter.policy === undefined ? host.runtimes() : [need(filter.policy)];
      // Every key at once: against a remote store (ioredis pipelines the commands) a slow or failing store costs
      // about one command timeout for the whole inspection, not one per key.
      const pending: Promise<ResilienceStateSnapshot>[] = [];
      for (const pr of runtimes) {
        for (const ks of pr.keys.values()) pending.push(snapshot(pr, ks));
        // A route-less force-open before any traffic: still visible, as the policy-wide (route-less) entry.
        if (pr.forcedAll && !pr.keys.has(undefined)) pending.push(snapshot(pr, pr.peek(undefined)));
      }
      return Promise.all(pending);
    },

    async forceOpen(policy: string, route?: string): Promise<void> {
      checkArguments('forceOpen', policy, route);
      const pr = need(policy);
      // Route-less: one policy-wide flag (pins no key); a route: that key's own flag.
      if (route === undefined) pr.forcedAll = true;
      else pr.key(route).forcedOpen = true;
    },

    async clearForcedOpen(policy: string, route?: string): Promise<void> {
      checkArguments('clearForcedOpen', policy, route);
      const pr = need(policy);
      if (route === undefined) pr.forcedAll = false;
      for (const ks of keysOf(pr, route)) ks.forcedOpen = false;
      pr.unpinned++;
    },

    async resetBreaker(policy: string, route?: string): Promise<void> {
      checkArguments('resetBreaker', policy, route);
      const pr = need(policy);
      if (pr.breakerParams === undefined) return;
      const e = host.engine;
      const keys = keysOf(pr, route);
      // A route this process never saw may still be open in a shared store (another replica tripped it): reset the
      // store's state for it, without creating a key here (the local store holds nothing for an unseen route).
      if (route !== undefined && keys.length === 0) {
        if (e.breakerStore !== e.breakerLocal)
          await e.breakerStore.reset(stateKey(pr.policy.name, route), e.clock.now());
        return;
      }
      // The same for the policy-wide state (no route: every replica behind a load balancer may receive the reset,
      // and most never served the policy). Routes only other replicas served cannot be listed: name them.
      if (route === undefined && !pr.keys.has(undefined) && e.breakerStore !== e.breakerLocal)
        await e.breakerStore.reset(stateKey(pr.policy.name, undefined), e.clock.now());
      for (const ks of keys) {
        const now = e.clock.now();
        await e.breakerLocal.reset(ks.key, now);
        if (e.breakerStore !== e.breakerLocal) await e.breakerStore.reset(ks.key, now);
        if (ks.breakerState !== 'closed' && e.listening) {
          e.emit({
            type: 'breaker_state',
            policy: pr.policy.name,
            route: ks.key.route,
            from: ks.breakerState,
            to: 'closed',
          });
        }
        ks.breakerState = 'closed';
      }
      pr.unpinned++;
    },

    async retune(policyOrSpec: unknown): Promise<void> {
      const policy = policyOrSpec instanceof ResiliencePolicy ? policyOrSpec : policyFromSpec(policyOrSpec);
      need(policy.name);
      host.replace(policy);
    },

    async policies(): Promise<string[]> {
      return host.runtimes().map((pr) => pr.policy.name);
    },
  });
}
