import type { Engine } from '../executor/engine';
import type { KeyState, PolicyRuntime } from '../executor/policy-runtime';
import type { ResiliencePolicy } from '../policy/resilience-policy';
import { POLICY_MODES, type PolicyMode } from '../policy/policy-mode';
import type { SettingAction } from '../control/control-store';
import { chaosPatchViolations, resetChaosHere, setChaosHere, type ChaosPatch } from './chaos-settings';
import { stateKey } from '../stores/ports';

/** What the control plane may touch of a `Resilience` (its registry of policy runtimes), and nothing else. */
export interface AdminHost {
  readonly engine: Engine;
  runtime(name: string): PolicyRuntime | undefined;
  runtimes(): PolicyRuntime[];
  replace(policy: ResiliencePolicy): void;
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

/** Route-less: one policy-wide flag (pins no key); a route: that key's own flag. */
export function forceOpenHere(pr: PolicyRuntime, route: string | undefined): void {
  if (route === undefined) pr.forcedAll = true;
  else pr.key(route).forcedOpen = true;
}

/** Route-less: the policy-wide flag and every route's own. */
export function clearForcedHere(pr: PolicyRuntime, route: string | undefined): void {
  if (route === undefined) pr.forcedAll = false;
  for (const ks of keysOf(pr, route)) ks.forcedOpen = false;
  pr.unpinned++;
}

/**
 * Resets this process's breaker state of the addressed keys, and — when `shared` — the shared store's too, once, by
 * the replica that made the call (every replica resetting a fleet's shared state again would erase outcomes
 * recorded in between). A route this process never saw may still be open in a shared store (another replica
 * tripped it): its store state is reset without creating a key here; the same for the policy-wide state, which most
 * replicas behind a load balancer never served. Routes only other replicas served cannot be listed: name them.
 */
export async function resetBreakerHere(
  e: Engine,
  pr: PolicyRuntime,
  route: string | undefined,
  shared: boolean,
): Promise<void> {
  if (pr.breakerParams === undefined) return;
  const keys = keysOf(pr, route);
  // A store other than this process's own is reset by the calling replica only; a per-replica store by each.
  const resetStore = e.breakerStore !== e.breakerLocal && shared;
  if (resetStore && route !== undefined && keys.length === 0)
    await e.breakerStore.reset(stateKey(pr.policy.name, route), e.clock.now());
  if (resetStore && route === undefined && !pr.keys.has(undefined))
    await e.breakerStore.reset(stateKey(pr.policy.name, undefined), e.clock.now());
  for (const ks of keys) {
    const now = e.clock.now();
    await e.breakerLocal.reset(ks.key, now);
    if (resetStore) await e.breakerStore.reset(ks.key, now);
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
}

/**
 * Applies a `setMode` / `setChaos` value (JSON data, from this replica's admin or the fleet's store) to a policy's
 * runtime; false when the value is not one this replica accepts (a newer replica wrote it, or someone else did).
 */
export function applySettingHere(pr: PolicyRuntime, action: SettingAction, value: unknown): boolean {
  if (action === 'setMode') {
    if (!POLICY_MODES.includes(value as PolicyMode)) return false;
    pr.setMode(value as PolicyMode);
    return true;
  }
  // A fleet `setChaos` is the cumulative patch over the policy's own settings (see `mergeChaosPatches`).
  if (chaosPatchViolations(value).length > 0) return false;
  resetChaosHere(pr);
  setChaosHere(pr, value as ChaosPatch);
  return true;
}
