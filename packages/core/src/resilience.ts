import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { composeClassifier } from './errors/classify';
import type { ResilienceEvent, ResilienceListener } from './events';
import { ResiliencePolicy } from './policy/resilience-policy';
import { BUILTIN_POLICIES } from './policy/builtin-policies';
import { InMemoryCircuitBreakerStore } from './stores/in-memory-circuit-breaker-store';
import { InMemoryLatencyDigestStore } from './stores/in-memory-latency-digest-store';
import { InMemoryRateLimitStore } from './stores/in-memory-rate-limit-store';
import type { ResilienceStores, StateKey } from './stores/ports';
import { systemClock, type Clock, type Random } from './time/clock';
import type { CallContext, Classifier, ResilienceAdmin, RunOptions } from './resilience-types';
import type { BulkheadHooks } from './bulkhead';
import type { Engine } from './executor/engine';
import { Invocation, type CallSettler } from './executor/invocation';
import { PolicyRuntime, type KeyDeps } from './executor/policy-runtime';
import { TimerQueue } from './executor/timer-queue';
import { admitStream, type StreamPermit } from './executor/stream-admission';
import { createAdmin, type ControlledAdminHost } from './admin/resilience-admin';
import { applySettingHere } from './admin/local-operations';
import { carryChaosOverride } from './admin/chaos-settings';
import { ControlReplica } from './control/control-replica';
import { InMemoryControlStore } from './control/in-memory-control-store';
import { callArgumentsError, validCallArguments } from './validation/call-arguments';
import { OptionsValidator, Rules, formatValue } from './validation/options-validator';

/**
 * Key of `Resilience`'s callback-style `run`, for Ballast's own integrations (`@ballast/nestjs`); not public API.
 * @internal
 */
export const RUN_SETTLED: unique symbol = Symbol('ballast.runSettled');

export interface ResilienceOptions {
  /** Your policies; a policy named like a built-in ('transient', 'occ') replaces it. */
  readonly policies?: readonly ResiliencePolicy[];
  readonly stores?: ResilienceStores;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Extends the default classification (return undefined to defer to it). */
  readonly classify?: Classifier;
  /** Per-policy bound on (policy, route) keys; idle keys are evicted least-recently-used first. Default 4096. */
  readonly maxKeysPerPolicy?: number;
  /**
   * Run each attempt inside an AsyncLocalStorage frame, so `currentSignal()` (and `remainingTime()` /
   * `currentCriticality()` under the call) work for code that cannot take `ctx`. Default `true`. On Node 20, the
   * first use of AsyncLocalStorage in a process turns on promise hooks that tax every promise of the process
   * (measured in BENCHMARKS.md); a service that passes `ctx.signal` explicitly and uses no other AsyncLocalStorage
   * can set `false` to avoid it. Deadlines and criticality bound by the caller are honoured either way.
   */
  readonly ambientContext?: boolean;
  /**
   * This replica's id in the control store's replica list and audit trail (SPEC §14.1). Default:
   * `<hostname>-<pid>-<random>`.
   */
  readonly replicaId?: string;
}

/**
 * The executor and control plane (SPEC §4–§6): runs functions through named policies, keeps per-(policy, route)
 * state, emits typed events and exposes `admin` for operators.
 */
export class Resilience {
  readonly clock: Clock;
  readonly admin: ResilienceAdmin;
  readonly #engine: Engine & KeyDeps;
  readonly #policies = new Map<string, PolicyRuntime>();
  #listeners: readonly ResilienceListener[] = [];
  readonly #maxKeys: number;
  /** Each policy's fleet version (0 as configured, absent = 0). */
  readonly #versions = new Map<string, number>();
  readonly #control: ControlReplica;
  /** Set while the control store's standing overrides are being read at start: calls wait for them. */
  #gate: Promise<void> | undefined;

  constructor(options: ResilienceOptions = {}) {
    // One options check, as every strategy's: each violation named with its field, constraint and value, together.
    const v = new OptionsValidator('Resilience');
    // A misspelled option (`polices`, `maxKeys`) must not silently leave its default in place.
    if (typeof options === 'object' && options !== null)
      for (const key of Object.keys(options))
        if (!RESILIENCE_OPTION_KEYS.includes(key))
          v.fail(
            key,
            `a known Resilience option (${RESILIENCE_OPTION_KEYS.join(', ')})`,
            (options as Record<string, unknown>)[key],
          );
    const policies = options.policies ?? [];
    const seen = new Set<string>();
    if (!Array.isArray(policies)) v.fail('policies', 'an array of ResiliencePolicy', policies);
    else
      policies.forEach((p, i) => {
        if (!(p instanceof ResiliencePolicy)) v.fail(`policies[${i}]`, 'a ResiliencePolicy', p);
        else if (seen.has(p.name)) v.fail(`policies[${i}].name`, `unique (a second '${p.name}')`, p.name);
        else seen.add(p.name);
      });
    const maxKeys = v.optionalNumber(
      'maxKeysPerPolicy',
      options.maxKeysPerPolicy,
      Rules.COUNT_AT_LEAST_ONE,
      4096,
    );
    if (options.ambientContext !== undefined) v.boolean('ambientContext', options.ambientContext, true);
    if (
      options.replicaId !== undefined &&
      !(typeof options.replicaId === 'string' && /^[\w.:@-]{1,128}$/.test(options.replicaId))
    )
      v.fail('replicaId', 'a string of 1–128 letters, digits, and . _ : @ -', options.replicaId);
    if (options.random !== undefined && typeof options.random !== 'function')
      v.fail('random', 'a function returning [0, 1)', options.random);
    if (options.classify !== undefined && typeof options.classify !== 'function')
      v.fail('classify', 'a function (error) => ExceptionKind | undefined', options.classify);
    if (options.clock !== undefined && !hasMethods(options.clock, CLOCK_METHODS))
      v.fail('clock', `a Clock { ${CLOCK_METHODS.join(', ')} }`, options.clock);
    checkStores(options.stores, v);
    v.throwIfInvalid();
    this.#maxKeys = maxKeys;
    this.clock = options.clock ?? systemClock;
    const stores = options.stores ?? {};
    const breakerLocal = new InMemoryCircuitBreakerStore();
    const rateLocal = new InMemoryRateLimitStore();
    const digestLocal = new InMemoryLatencyDigestStore();
    const engine: Engine & KeyDeps = {
      clock: this.clock,
      random: options.random ?? Math.random,
      classify: composeClassifier(options.classify),
      timers: new TimerQueue(this.clock),
      listening: false,
      ambientContext: options.ambientContext ?? true,
      emit: (event) => this.#emit(event),
      breakerStore: stores.circuitBreaker ?? breakerLocal,
      breakerLocal,
      rateStore: stores.rateLimit ?? rateLocal,
      rateLocal,
      digest: stores.latencyDigest ?? digestLocal,
      bulkheadHooks: (policy, route) => this.#bulkheadHooks(policy, route),
      evicted: (key: StateKey) => {
        breakerLocal.evict(key);
        rateLocal.evict(key);
        digestLocal.evict(key);
        stores.circuitBreaker?.evict?.(key);
        stores.rateLimit?.evict?.(key);
        stores.latencyDigest?.evict?.(key);
      },
    };
    this.#engine = engine;
    for (const p of BUILTIN_POLICIES) this.#policies.set(p.name, new PolicyRuntime(p, maxKeys, engine));
    for (const p of policies) this.#policies.set(p.name, new PolicyRuntime(p, maxKeys, engine));
    const replace = (policy: ResiliencePolicy, version: number): void => {
      const old = this.#policies.get(policy.name)!;
      const next = new PolicyRuntime(policy, this.#maxKeys, engine);
      next.forcedAll = old.forcedAll;
      next.setMode(old.modeOverride);
      const dropDigest = old.digestParams !== undefined || next.digestParams !== undefined;
      // Every route seen stays known (inspect lists it; an open breaker's key stays pinned), with fresh adaptive state.
      for (const [route, ks] of old.keys) {
        const fresh = next.key(route);
        fresh.forcedOpen = ks.forcedOpen;
        fresh.breakerState = ks.breakerState;
        fresh.breakerSeenAt = ks.breakerSeenAt;
        ks.successor = fresh;
        ks.carryCallsTo(fresh);
        if (dropDigest) this.#resetDigest(policy.name, route, ks.key);
      }
      this.#policies.set(policy.name, next);
      carryChaosOverride(old, next);
      this.#versions.set(policy.name, version);
    };
    const version = (name: string): number => this.#versions.get(name) ?? 0;
    const runtime = (name: string): PolicyRuntime | undefined => this.#policies.get(name);
    this.#control = new ControlReplica(
      stores.control ?? new InMemoryControlStore(),
      { engine, runtime, replace, version, applySetting: applySettingHere },
      options.replicaId ?? defaultReplicaId(),
      Date.now(),
    );
    const host: ControlledAdminHost = {
      engine,
      runtime,
      runtimes: () => [...this.#policies.values()],
      replace: (policy) => replace(policy, version(policy.name)),
      replaceAt: replace,
      version,
      control: this.#control,
      sharedControl: stores.control !== undefined,
    };
    this.admin = createAdmin(host);
    // The standing overrides apply before the first call: at once with an in-process store, else calls wait.
    const started = this.#control.start();
    if (started instanceof Promise)
      this.#gate = started.then(() => {
        this.#gate = undefined;
      });
  }

  /**
   * Resolves once the control store's standing overrides are applied (at once without a remote control store).
   * Calls made before wait for it by themselves; a server can await it before it starts listening.
   */
  ready(): Promise<void> {
    return this.#gate ?? Promise.resolve();
  }

  /**
   * Stops the control plane's heartbeats, reconcile timer, expiry timers and subscription, and leaves the replica
   * list (SPEC §14.1). After it, the clock holds no timer of this `Resilience` but those of calls still running.
   * Calls still work (on the state they have); admin actions then act on a closed replica — close on shutdown.
   */
  async close(): Promise<void> {
    await this.#control.close();
  }

  /**
   * Runs `fn` through the named policy. `fn` receives `{ signal, attempt, policy, route }`; the promise settles with
   * its value, the fallback's value, or the error that ended the call (a `ResilienceError` for Ballast's own
   * rejections and timeouts, the caller's abort reason when the caller aborted).
   */
  run<T>(fn: (ctx: CallContext) => T | Promise<T>, options: RunOptions<T>): Promise<T> {
    if (this.#gate !== undefined) return this.#gate.then(() => this.run(fn, options));
    // Bad arguments (from JavaScript, or from configuration) are a rejection naming each one, never a throw.
    const pr =
      typeof options === 'object' && options !== null ? this.#policies.get(options.policy) : undefined;
    if (pr === undefined || !validCallArguments(fn, options))
      return Promise.reject(callArgumentsError('run', fn, options, pr !== undefined));
    const ks = pr.key(options.route);
    // A forced-open key is refused inside the invocation, before any strategy, so the fallback still applies.
    return new Invocation(
      this.#engine,
      pr,
      ks,
      fn as (ctx: CallContext) => unknown,
      options,
    ).start() as Promise<T>;
  }

  /**
   * `run` for integrations that continue with a callback rather than a promise (`@ballast/nestjs`): the same call,
   * minus the promise and the reaction a caller would add to it. `settler.settled(ok, result)` is called exactly once,
   * possibly before this returns. Not part of the public API. @internal
   */
  [RUN_SETTLED](fn: (ctx: CallContext) => unknown, options: RunOptions<unknown>, settler: CallSettler): void {
    if (this.#gate !== undefined) {
      void this.#gate.then(() => this[RUN_SETTLED](fn, options, settler));
      return;
    }
    const pr = this.#policies.get(options.policy);
    if (pr === undefined) return settler.settled(false, callArgumentsError('run', fn, options, false));
    new Invocation(this.#engine, pr, pr.key(options.route), fn, options).startSettled(settler);
  }

  /**
   * Breaker-only admission for a stream (an async generator, server-sent events): refused while forced open or while
   * the breaker is open; settle the permit once when the stream ends. Rate limit, bulkhead, retry, timeout and hedge
   * never apply to streams (SPEC §9).
   */
  admitStream(policy: string, options: { readonly route?: string | undefined } = {}): Promise<StreamPermit> {
    if (this.#gate !== undefined) return this.#gate.then(() => this.admitStream(policy, options));
    const pr = this.#policies.get(policy);
    const route: unknown = typeof options === 'object' && options !== null ? options.route : null;
    if (pr === undefined || (route !== undefined && typeof route !== 'string'))
      return Promise.reject(callArgumentsError('admitStream', undefined, options, pr !== undefined, policy));
    return admitStream(this.#engine, pr, pr.key(route));
  }

  /** Subscribes to every event; returns the unsubscribe function. With no listener nothing is built. */
  on(listener: ResilienceListener): () => void {
    if (typeof listener !== 'function')
      throw new TypeError(`listener must be a function, got ${formatValue(listener)}`);
    this.#listeners = [...this.#listeners, listener];
    this.#engine.listening = true;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      // This subscription only: the same function subscribed twice keeps its other subscription.
      const i = this.#listeners.indexOf(listener);
      if (i < 0) return; // dropped by dispose()
      this.#listeners = [...this.#listeners.slice(0, i), ...this.#listeners.slice(i + 1)];
      this.#engine.listening = this.#listeners.length > 0;
    };
  }

  /** The policy registered under `name` (after any retune), or undefined. */
  policy(name: string): ResiliencePolicy | undefined {
    return this.#policies.get(name)?.policy;
  }

  /** Drops every listener. Ballast holds no timer while no call is running, so nothing else needs stopping. */
  dispose(): void {
    this.#listeners = [];
    this.#engine.listening = false;
  }

  #emit(event: ResilienceEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch (err) {
        // A faulty listener must never break the call it observes.
        process.emitWarning(
          `Ballast event listener threw on '${event.type}': ${String(err)}`,
          'BallastListenerWarning',
        );
      }
    }
  }

  /** Retune drops the adaptive bulkhead's latency estimate too (SPEC §6), in the store, where a fleet shares it. */
  #resetDigest(policy: string, route: string | undefined, key: StateKey): void {
    const e = this.#engine;
    const degraded = (error: unknown): void => {
      if (e.listening) e.emit({ type: 'store_degraded', policy, route, store: 'latencyDigest', error });
    };
    try {
      const done = e.digest.reset(key, e.clock.now());
      if (done instanceof Promise) done.then(undefined, degraded);
    } catch (error) {
      degraded(error);
    }
  }

  #bulkheadHooks(policy: string, route: string | undefined): BulkheadHooks {
    const e = this.#engine;
    return {
      onLimit: (limit) => {
        if (e.listening) e.emit({ type: 'bulkhead_limit', policy, route, limit });
      },
      onShed: (criticality, sojourn) => {
        if (e.listening) e.emit({ type: 'bulkhead_shed', policy, route, criticality, sojourn });
      },
      onStoreError: (error) => {
        if (e.listening) e.emit({ type: 'store_degraded', policy, route, store: 'latencyDigest', error });
      },
    };
  }
}

const CLOCK_METHODS = ['now', 'setTimeout', 'clearTimeout'] as const;
/** The methods each store port must have (`evict` is optional). */
const STORE_METHODS = {
  circuitBreaker: ['acquire', 'record', 'inspect', 'reset'],
  rateLimit: ['take', 'tokens', 'reset'],
  latencyDigest: ['observe', 'read', 'reset'],
  control: ['read', 'seq', 'write', 'record', 'audit', 'subscribe', 'heartbeat', 'leave', 'replicas'],
} as const;

/** `<hostname>-<pid>-<4 hex>`: readable in `admin.replicas()`, unique across restarts of one pod. */
function defaultReplicaId(): string {
  const host =
    hostname()
      .replace(/[^\w.:@-]/g, '_')
      .slice(0, 64) || 'host';
  return `${host}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

/** The options `new Resilience` takes; any other key is a violation. */
const RESILIENCE_OPTION_KEYS: readonly string[] = [
  'policies',
  'stores',
  'clock',
  'random',
  'classify',
  'maxKeysPerPolicy',
  'ambientContext',
  'replicaId',
];

/** A store given in the wrong shape (or under an unknown name) fails at construction, not on the first call. */
function checkStores(stores: unknown, v: OptionsValidator): void {
  if (stores === undefined) return;
  if (typeof stores !== 'object' || stores === null) {
    v.fail('stores', 'an object { circuitBreaker?, rateLimit?, latencyDigest?, control? }', stores);
    return;
  }
  for (const key of Object.keys(stores))
    if (!Object.prototype.hasOwnProperty.call(STORE_METHODS, key))
      v.fail(
        `stores.${key}`,
        `a known store (${Object.keys(STORE_METHODS).join(', ')})`,
        (stores as Record<string, unknown>)[key],
      );
  for (const [name, methods] of Object.entries(STORE_METHODS)) {
    const store = (stores as Record<string, unknown>)[name];
    if (store !== undefined && !hasMethods(store, methods))
      v.fail(`stores.${name}`, `a store with ${methods.join(', ')}`, store);
  }
}
