import type { Engine } from '../executor/engine';
import type { PolicyRuntime } from '../executor/policy-runtime';
import type { ResiliencePolicy } from '../policy/resilience-policy';
import { storeUnavailable, versionConflict } from './control-errors';
import { LocalExpiries } from './local-expiry';
import { emitApplied, fleetPolicy } from './control-events';
import { AppliedForces } from './applied-forces';
import { AppliedSettings, type SettingApplier } from './applied-settings';
import type { SettingAction } from './control-store';
import type { TimerHandle } from '../time/clock';
import { clearForcedHere, resetBreakerHere } from '../admin/local-operations';
import type {
  ControlAction,
  ControlChange,
  ControlState,
  ControlStore,
  ControlSubscription,
  ReplicaInfo,
} from './control-store';

/** What a replica changes in its `Resilience`. */
export interface ControlHost {
  readonly engine: Engine;
  runtime(name: string): PolicyRuntime | undefined;
  /** Applies a `setMode` / `setChaos` value; false when it is not valid here. */
  readonly applySetting: SettingApplier;
  /** Swaps in a policy and records the fleet version it carries. */
  replace(policy: ResiliencePolicy, version: number): void;
  version(name: string): number;
}

/**
 * One replica's side of the fleet control plane (SPEC §14.1). It makes this `Resilience` match the store's standing
 * overrides: on start (before the first call), on every notice, and on a periodic reconcile that repairs a notice
 * lost with a dropped connection. Matching is by state, never by replaying commands, so applying twice is harmless
 * and a forged notice causes at most one extra read.
 */
export class ControlReplica {
  readonly info: { id: string; startedAt: number };
  /** The store `seq` this replica has applied; -1 before the first read. */
  #seq = -1;
  readonly #forces: AppliedForces;
  readonly #localExpiry: LocalExpiries;
  readonly #settings: AppliedSettings;
  #subscription: ControlSubscription | undefined;
  #subscribing = false;
  #syncing: Promise<void> | undefined;
  #again = false;
  #reconcileTimer: TimerHandle | undefined;
  #heartbeatTimer: TimerHandle | undefined;
  #closed = false;
  /** Whether the store is failing; `store_degraded` is emitted once per outage, not once per tick. */
  #degraded = false;

  constructor(
    readonly store: ControlStore,
    private readonly host: ControlHost,
    id: string,
    startedAt: number,
  ) {
    this.info = { id, startedAt };
    this.#localExpiry = new LocalExpiries(host.engine.clock);
    this.#forces = new AppliedForces((name) => host.runtime(name), host.engine.clock, {
      forced: (policy, route) => this.#emit('forceOpen', policy, route, 'fleet'),
      cleared: (policy, route, expired) => this.#emit('clearForcedOpen', policy, route, 'fleet', expired),
      expired: () => void this.sync(),
    });
    this.#settings = new AppliedSettings(
      (name) => host.runtime(name),
      host.applySetting,
      (action, policy) => this.#emit(action, policy, undefined, 'fleet'),
    );
  }

  get seq(): number {
    return this.#seq;
  }

  /**
   * Subscribes, announces itself and applies the standing overrides. Synchronous with a synchronous store (no call
   * can slip in before), a promise otherwise (the `Resilience` holds calls until it settles). Never rejects: a
   * store that is down leaves the configured policies in force, and the reconcile keeps trying.
   */
  start(): void | Promise<void> {
    const subscribed = this.#subscribe();
    const announce = (): void => {
      this.#heartbeat();
      this.#scheduleTimers();
    };
    const read = (): void | Promise<void> => {
      const synced = this.sync();
      return synced instanceof Promise ? synced.then(announce) : announce();
    };
    return subscribed instanceof Promise ? subscribed.then(read) : read();
  }

  /** Reads the store and applies what changed; concurrent requests coalesce into one more read. */
  sync(): void | Promise<void> {
    if (this.#closed) return;
    if (this.#syncing !== undefined) {
      this.#again = true;
      return this.#syncing;
    }
    let state: ControlState | Promise<ControlState>;
    try {
      state = this.store.read(this.host.engine.clock.now());
    } catch (error) {
      return this.#failed(error);
    }
    if (!(state instanceof Promise)) {
      this.#ok();
      this.#apply(state);
      return;
    }
    const run = state.then(
      (s) => {
        this.#ok();
        this.#apply(s);
      },
      (error: unknown) => this.#failed(error),
    );
    this.#syncing = run.then(() => {
      this.#syncing = undefined;
      if (this.#again) {
        this.#again = false;
        return this.sync();
      }
    });
    return this.#syncing;
  }

  /**
   * A fleet write: store first (nothing changes anywhere if it fails), then this replica, then a sync.
   * `policy`: a retune's policy object, which this replica applies as given.
   */
  async write(change: ControlChange, policy?: ResiliencePolicy): Promise<{ seq: number; version?: number }> {
    let result;
    try {
      result = await this.store.write(change, this.host.engine.clock.now());
    } catch (error) {
      throw storeUnavailable(change.action, error);
    }
    if (!result.ok)
      throw versionConflict(
        change.policy,
        result.version,
        change.action === 'retune' ? change.ifVersion : undefined,
      );
    // This replica applies its own change at once, even if the read below fails.
    const pr = this.host.runtime(change.policy);
    if (pr !== undefined) {
      if (change.action === 'forceOpen')
        this.#forces.force(
          { policy: change.policy, route: change.route, seq: result.seq, ...ttlOf(change) },
          pr,
        );
      else if (change.action === 'clearForcedOpen') this.#clearFleet(change.policy, change.route, true);
      else if (change.action === 'resetBreaker')
        await resetBreakerHere(this.host.engine, pr, change.route, true);
      else if (change.action === 'setMode' || change.action === 'setChaos')
        this.#settings.apply({
          policy: change.policy,
          action: change.action,
          value: change.value,
          seq: result.seq,
        });
      else if (policy !== undefined) {
        // The writer keeps the very policy it was given (its functions included); others rebuild it from the spec.
        // An in-process store notifies synchronously: the spec's copy may already be in, with its event.
        const applied = this.host.version(change.policy) >= result.version!;
        this.host.replace(policy, result.version!);
        if (!applied) this.#emit('retune', change.policy, undefined, 'fleet', undefined, result.version);
      } else if (change.action === 'retune') this.#retune(change.policy, change.spec, result.version!);
    }
    await this.sync();
    return result;
  }

  /** The fleet's standing `setMode` / `setChaos` value of a policy, as this replica applied it. */
  setting(action: SettingAction, policy: string): unknown {
    return this.#settings.valueOf(action, policy);
  }

  /** A local-scope force-open with a ttl clears itself here when it ends. */
  expireLocally(policy: string, route: string | undefined, ttl: number): void {
    this.#localExpiry.arm(policy, route, ttl, () => {
      const pr = this.host.runtime(policy);
      if (pr === undefined) return;
      clearForcedHere(pr, route);
      this.#emit('clearForcedOpen', policy, route, 'local', true);
    });
  }

  /** A local clear also drops a pending local expiry. */
  forgetLocalExpiry(policy: string, route: string | undefined): void {
    this.#localExpiry.forget(policy, route);
  }

  /** Stops timers and the subscription, and leaves the replica list. After it, no timer of this replica runs. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const clock = this.host.engine.clock;
    if (this.#reconcileTimer !== undefined) clock.clearTimeout(this.#reconcileTimer);
    if (this.#heartbeatTimer !== undefined) clock.clearTimeout(this.#heartbeatTimer);
    this.#forces.stopTimers();
    this.#localExpiry.clear();
    const sub = this.#subscription;
    this.#subscription = undefined;
    await Promise.allSettled([
      (async () => sub?.close())(),
      (async () => this.store.leave(this.info.id))(),
      this.#syncing,
    ]);
  }

  replicaInfo(): ReplicaInfo {
    return { ...this.info, version: Math.max(this.#seq, 0) };
  }

  #apply(state: ControlState): void {
    if (this.#closed) return;
    const first = this.#seq < 0;
    for (const p of state.policies)
      if (this.host.runtime(p.policy) !== undefined && p.version > this.host.version(p.policy))
        this.#retune(p.policy, p.spec, p.version);
    this.#forces.match(state.forced);
    this.#settings.match(state.settings);
    if (!first)
      for (const r of state.resets) {
        const pr = this.host.runtime(r.policy);
        if (r.seq > this.#seq && pr !== undefined) {
          void resetBreakerHere(this.host.engine, pr, r.route, false).then(undefined, () => undefined);
          this.#emit('resetBreaker', r.policy, r.route, 'fleet');
        }
      }
    const moved = state.seq !== this.#seq;
    this.#seq = state.seq;
    // The replica list shows which seq each replica applied: tell it now, not at the next heartbeat.
    if (moved && !first) this.#heartbeat();
  }

  /** The writer of a fleet clear: its own overrides now, and its local flags, as `admin.clearForcedOpen` promises. */
  #clearFleet(policy: string, route: string | undefined, writer: boolean): void {
    this.#forces.clear(policy, route);
    const pr = this.host.runtime(policy);
    if (writer && pr !== undefined) {
      clearForcedHere(pr, route);
      this.forgetLocalExpiry(policy, route);
    }
  }

  #retune(policy: string, spec: unknown, version: number): void {
    const next = fleetPolicy(policy, spec, version);
    if (next === undefined) return;
    this.host.replace(next, version);
    this.#emit('retune', policy, undefined, 'fleet', undefined, version);
  }

  #subscribe(): void | Promise<void> {
    if (this.#subscription !== undefined || this.#subscribing || this.#closed) return;
    const onNotice = (seq: number): void => {
      if (seq !== this.#seq) void this.sync();
    };
    let sub: ControlSubscription | Promise<ControlSubscription>;
    try {
      sub = this.store.subscribe(onNotice);
    } catch (error) {
      this.#failed(error);
      return;
    }
    if (!(sub instanceof Promise)) {
      this.#subscription = sub;
      return;
    }
    this.#subscribing = true;
    return sub.then(
      (s) => {
        this.#subscribing = false;
        if (this.#closed) void (async () => s.close())().catch(() => undefined);
        else this.#subscription = s;
      },
      (error: unknown) => {
        this.#subscribing = false;
        this.#failed(error);
      },
    );
  }

  #heartbeat(): void {
    const ttl = 3 * (this.store.heartbeatInterval ?? 0);
    try {
      const done = this.store.heartbeat(this.replicaInfo(), ttl, this.host.engine.clock.now());
      if (done instanceof Promise) done.then(undefined, (e: unknown) => this.#failed(e));
    } catch (error) {
      this.#failed(error);
    }
  }

  #scheduleTimers(): void {
    const clock = this.host.engine.clock;
    const reconcile = this.store.reconcileInterval;
    if (reconcile !== undefined && this.#reconcileTimer === undefined) {
      const tick = (): void => {
        this.#reconcileTimer = undefined;
        if (this.#closed) return;
        void this.#subscribe();
        void this.#reconcile().finally(() => {
          if (!this.#closed) this.#reconcileTimer = clock.setTimeout(tick, reconcile);
        });
      };
      this.#reconcileTimer = clock.setTimeout(tick, reconcile);
    }
    const beat = this.store.heartbeatInterval;
    if (beat !== undefined && this.#heartbeatTimer === undefined) {
      const tick = (): void => {
        if (this.#closed) return;
        this.#heartbeat();
        this.#heartbeatTimer = clock.setTimeout(tick, beat);
      };
      this.#heartbeatTimer = clock.setTimeout(tick, beat);
    }
  }

  /** The cheap check: one `seq` read, and a full read only when it moved. */
  async #reconcile(): Promise<void> {
    try {
      const seq = await this.store.seq();
      this.#ok();
      if (seq !== this.#seq) await this.sync();
    } catch (error) {
      this.#failed(error);
    }
  }

  #ok(): void {
    this.#degraded = false;
  }

  #failed(error: unknown): void {
    if (this.#degraded) return;
    this.#degraded = true;
    const e = this.host.engine;
    if (e.listening)
      e.emit({ type: 'store_degraded', policy: '', route: undefined, store: 'control', error });
  }

  #emit(
    action: ControlAction,
    policy: string,
    route: string | undefined,
    scope: 'fleet' | 'local',
    expired?: boolean,
    version?: number,
  ): void {
    emitApplied(this.host.engine, action, policy, route, scope, expired, version);
  }

  /** For `admin`: the same event when a local-scope action is applied. */
  emitLocal(action: ControlAction, policy: string, route: string | undefined, version?: number): void {
    this.#emit(action, policy, route, 'local', undefined, version);
  }
}

function ttlOf(change: ControlChange): { remaining?: number } {
  return change.action === 'forceOpen' && change.ttl !== undefined ? { remaining: change.ttl } : {};
}
