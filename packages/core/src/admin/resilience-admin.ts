import { ResilienceError } from '../errors/resilience-error';
import { policyFromSpec, policyToSpec } from '../policy/policy-spec';
import { hedgeDelayOf } from '../executor/hedge';
import type { KeyState, PolicyRuntime } from '../executor/policy-runtime';
import type { StoreName } from '../events';
import type { ResilienceAdmin } from '../resilience-types';
import { formatValue } from '../validation/options-validator';
import type { ControlReplica } from '../control/control-replica';
import { versionConflict } from '../control/control-errors';
import type { AuditEntry, ControlChange, ReplicaRecord, SettingAction } from '../control/control-store';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { POLICY_MODES, type PolicyMode } from '../policy/policy-mode';
import {
  checkAdminCall,
  checkAuditLimit,
  unknownPolicyError,
  type ResolvedAdminOptions,
} from './admin-arguments';
import {
  applySettingHere,
  clearForcedHere,
  forceOpenHere,
  resetBreakerHere,
  type AdminHost,
} from './local-operations';
import type { ResilienceStateSnapshot } from './snapshot';
import {
  checkChaosPatch,
  chaosSettingsOf,
  mergeChaosPatches,
  setChaosHere,
  type ChaosPatch,
} from './chaos-settings';

export type { AdminHost } from './local-operations';

/** The admin's view of its `Resilience`: the registry, the control replica and the fleet version of each policy. */
export interface ControlledAdminHost extends AdminHost {
  readonly control: ControlReplica;
  /** Whether the control store was given (shared with other replicas) rather than this `Resilience`'s own. */
  readonly sharedControl: boolean;
  version(name: string): number;
  /** Swaps in a policy at `version` (a local retune keeps the version it had). */
  replaceAt(policy: ResiliencePolicy, version: number): void;
}

export function createAdmin(host: ControlledAdminHost): ResilienceAdmin {
  const need = (name: string): PolicyRuntime => {
    const pr = host.runtime(name);
    if (pr === undefined) throw unknownPolicyError(name);
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
    } = {
      policy: policy.name,
      route: key.route,
      forcedOpen: ks.forcedOpen || pr.forcedAll,
      version: host.version(policy.name),
      mode: pr.mode,
    };
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
    const chaos = chaosSettingsOf(pr);
    if (chaos !== undefined) snap.chaos = chaos;
    return snap;
  };

  const control = host.control;
  /** This replica's own admin calls (capped), answered by `audit()` while the store is down. */
  let ownAudit: AuditEntry[] = [];
  const change = <C extends Partial<ControlChange>>(
    action: C,
    policy: string,
    route: string | undefined,
    o: ResolvedAdminOptions,
  ): ControlChange =>
    ({
      ...action,
      policy,
      route,
      reason: o.reason,
      actor: o.actor,
      replica: control.info.id,
    }) as unknown as ControlChange;
  /** Local actions are audited too (best effort: the local scope must work while the store is down). */
  const recordLocal = (
    action: AuditEntry['action'],
    policy: string,
    route: string | undefined,
    o: ResolvedAdminOptions,
    extra: Partial<AuditEntry> = {},
  ): void => {
    const entry: Omit<AuditEntry, 'at'> = {
      action,
      policy,
      scope: 'local',
      replica: control.info.id,
      ...(route === undefined ? {} : { route }),
      ...(o.actor === undefined ? {} : { actor: o.actor }),
      ...(o.reason === undefined ? {} : { reason: o.reason }),
      ...extra,
    };
    ownAudit = [...ownAudit, { at: Date.now(), ...entry }].slice(-100);
    try {
      const done = control.store.record(entry);
      if (done instanceof Promise) done.then(undefined, () => undefined);
    } catch {
      // the store is down: the entry stays in this replica's own trail
    }
  };

  /** A standing per-policy setting (SPEC §14.3): written to the fleet, or applied and audited here alone. */
  const setting = async (
    action: SettingAction,
    pr: PolicyRuntime,
    fleetValue: unknown,
    o: ResolvedAdminOptions,
    applyLocally: () => void,
    localValue: unknown = fleetValue,
  ): Promise<void> => {
    const policy = pr.policy.name;
    if (o.scope === 'fleet') {
      await control.write(change({ action, value: fleetValue }, policy, undefined, o));
      return;
    }
    applyLocally();
    control.emitLocal(action, policy, undefined);
    recordLocal(action, policy, undefined, o, { value: localValue });
  };

  return Object.freeze({
    async inspect(filter: { policy?: string } = {}): Promise<ResilienceStateSnapshot[]> {
      if (typeof filter !== 'object' || filter === null)
        throw new ResilienceError({
          kind: 'configuration',
          message: `Invalid admin.inspect() call: filter must be an object ({ policy? }) or undefined, got ${formatValue(filter)}`,
        });
      if (filter.policy !== undefined) checkAdminCall('inspect', filter.policy, undefined, undefined);
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

    async forceOpen(policy: string, route?: string, options?: unknown): Promise<void> {
      const o = checkAdminCall('forceOpen', policy, route, options, ['ttl']);
      const pr = need(policy);
      if (o.scope === 'fleet') {
        await control.write(change({ action: 'forceOpen', ttl: o.ttl }, policy, route, o));
        return;
      }
      forceOpenHere(pr, route);
      if (o.ttl !== undefined) control.expireLocally(policy, route, o.ttl);
      control.emitLocal('forceOpen', policy, route);
      recordLocal('forceOpen', policy, route, o, o.ttl === undefined ? {} : { ttl: o.ttl });
    },

    async clearForcedOpen(policy: string, route?: string, options?: unknown): Promise<void> {
      const o = checkAdminCall('clearForcedOpen', policy, route, options);
      const pr = need(policy);
      if (o.scope === 'fleet') {
        await control.write(change({ action: 'clearForcedOpen' }, policy, route, o));
        return;
      }
      clearForcedHere(pr, route);
      control.forgetLocalExpiry(policy, route);
      control.emitLocal('clearForcedOpen', policy, route);
      recordLocal('clearForcedOpen', policy, route, o);
    },

    async resetBreaker(policy: string, route?: string, options?: unknown): Promise<void> {
      const o = checkAdminCall('resetBreaker', policy, route, options);
      const pr = need(policy);
      if (pr.breakerParams === undefined) return;
      if (o.scope === 'fleet') {
        await control.write(change({ action: 'resetBreaker' }, policy, route, o));
        return;
      }
      // Local scope: this replica's breaker state; a shared breaker store's state is the fleet's one state, so it
      // is reset too (as before the control plane existed).
      await resetBreakerHere(host.engine, pr, route, true);
      control.emitLocal('resetBreaker', policy, route);
      recordLocal('resetBreaker', policy, route, o);
    },

    async retune(policyOrSpec: unknown, options?: unknown): Promise<{ policy: string; version: number }> {
      // Validated before anything is published: a spec the writer refuses never reaches a replica.
      const policy = policyOrSpec instanceof ResiliencePolicy ? policyOrSpec : policyFromSpec(policyOrSpec);
      const o = checkAdminCall('retune', policy.name, undefined, options, ['ifVersion']);
      need(policy.name);
      const current = host.version(policy.name);
      if (o.scope === 'fleet') {
        if (host.sharedControl && policy.fallback !== undefined)
          throw new ResilienceError({
            kind: 'configuration',
            message: `Invalid admin.retune() call: a fleet retune travels as a JSON spec, which cannot carry the fallback function of policy '${policy.name}'; retune it with { scope: 'local' } on each replica, or drop the fallback`,
            details: { policy: policy.name },
          });
        const spec = policyToSpec(policy);
        const { version } = await control.write(
          change({ action: 'retune', spec, ifVersion: o.ifVersion }, policy.name, undefined, o),
          policy,
        );
        return { policy: policy.name, version: version ?? current };
      }
      if (o.ifVersion !== undefined && o.ifVersion !== current)
        throw versionConflict(policy.name, current, o.ifVersion);
      host.replaceAt(policy, current);
      control.emitLocal('retune', policy.name, undefined, current);
      recordLocal('retune', policy.name, undefined, o, { spec: policyToSpec(policy), version: current });
      return { policy: policy.name, version: current };
    },

    async setMode(policy: string, mode: PolicyMode, options?: unknown): Promise<void> {
      const o = checkAdminCall('setMode', policy, undefined, options, [], (v) => {
        if (!POLICY_MODES.includes(mode))
          v.fail('mode', `one of ${POLICY_MODES.map((m) => `'${m}'`).join(', ')}`, mode);
      });
      const pr = need(policy);
      await setting('setMode', pr, mode, o, () => applySettingHere(pr, 'setMode', mode));
    },

    async setChaos(policy: string, patch: ChaosPatch, options?: unknown): Promise<void> {
      const o = checkAdminCall('setChaos', policy, undefined, options, [], (v) => checkChaosPatch(v, patch));
      const pr = need(policy);
      // Fleet: the new patch over the standing one, so a replica that starts later applies the same settings.
      const standing = mergeChaosPatches(control.setting('setChaos', policy), patch);
      await setting('setChaos', pr, standing, o, () => setChaosHere(pr, patch), patch);
    },

    async replicas(): Promise<ReplicaRecord[]> {
      try {
        return await control.store.replicas(host.engine.clock.now());
      } catch {
        // Store down: this replica's own view, which is all it knows.
        return [{ ...control.replicaInfo(), lastSeen: Date.now() }];
      }
    },

    async audit(options?: unknown): Promise<AuditEntry[]> {
      const limit = checkAuditLimit(options);
      try {
        return await control.store.audit(limit);
      } catch {
        // Store down: what this replica did itself since it started, newest first.
        return ownAudit.slice(-limit).reverse();
      }
    },

    async policies(): Promise<string[]> {
      return host.runtimes().map((pr) => pr.policy.name);
    },
  });
}
