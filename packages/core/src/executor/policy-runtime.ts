import { AdaptiveThrottle } from '@ballast/sre-throttle';
import { WindowedP2Quantile } from '@ballast/p2-quantile';
import type { ResiliencePolicy } from '../policy/resilience-policy';
import type { PolicyMode } from '../policy/policy-mode';
import { RetryBudgetState } from '../strategies/retry-budget';
import { armedChaos, type ResolvedChaosOptions } from '../strategies/chaos-strategy';
import {
  createBulkheadRuntime,
  type BulkheadHooks,
  type BulkheadRuntime,
  type RunningCalls,
} from '../bulkhead';
import {
  stateKey,
  type BreakerParams,
  type BreakerState,
  type DigestParams,
  type LatencyDigestStore,
  type RateLimitParams,
  type StateKey,
} from '../stores/ports';
import type { Clock } from '../time/clock';

/** What a key's runtime needs from its `Resilience`. */
export interface KeyDeps {
  readonly clock: Clock;
  readonly digest: LatencyDigestStore;
  /** Hooks for a key's bulkhead (events), built per key. */
  bulkheadHooks(policy: string, route: string | undefined): BulkheadHooks;
  /** Called when an idle key is evicted, so stores can forget it. */
  evicted(key: StateKey): void;
}

/** What a key tells its runtime (it may have become evictable, see `PolicyRuntime.key`) and reads from it. */
interface KeyOwner {
  unpinned: number;
  /** The policy-wide (route-less) force-open flag. */
  readonly forcedAll: boolean;
}

/**
 * Per-(policy, route) state that lives in process: adaptive limits, queues, throttle window, budgets and the hedge
 * latency estimator. Breaker and rate-limit state live in stores (possibly shared by a fleet).
 */
export class KeyState implements RunningCalls {
  readonly key: StateKey;
  /** Calls and streams of this key still running (an idle key may be evicted). */
  inflight = 0;
  /** The streams among {@link inflight}: they never take a bulkhead slot. */
  streams = 0;
  /**
   * Calls of keys this one replaced (retunes) that run without a bulkhead slot, counted here so that a bulkhead a
   * later retune adds counts them too (see {@link carryCallsTo}). They pin the key against eviction.
   */
  #foreign = 0;
  /** Running calls a retune carried to the next key or its bulkhead, given back there one by one as they end. */
  #carried = 0;
  #carriedTo: RunningCalls | undefined = undefined;
  /** Second-chance bit of the CLOCK eviction: set on use, cleared by the eviction sweep. */
  touched = true;
  forcedOpen = false;
  /**
   * Last breaker state this process saw, and when it first saw it (for a state other than closed). A key whose
   * breaker is open or half-open is not evicted until `breakDuration` after that: by then the break has ended, and
   * an outage across many routes must not grow the map without bound (SPEC §5: LRU eviction of idle keys).
   * Set through {@link sawBreaker}.
   */
  breakerState: BreakerState = 'closed';
  breakerSeenAt = 0;
  readonly #breakDuration: number;
  /** The key's state in the runtime that replaced this one (a retune), while calls still finish on this one. */
  successor: KeyState | undefined = undefined;
  readonly bulkhead: BulkheadRuntime | undefined;
  readonly #clock: Clock;
  readonly throttle: AdaptiveThrottle | undefined;
  readonly retryBudget: RetryBudgetState | undefined;
  readonly hedgeBudget: RetryBudgetState | undefined;
  readonly hedgeLatency: WindowedP2Quantile | undefined;

  constructor(
    policy: ResiliencePolicy,
    route: string | undefined,
    deps: KeyDeps,
    private readonly owner: KeyOwner,
  ) {
    this.key = stateKey(policy.name, route);
    this.#breakDuration = policy.circuitBreaker?.options.breakDuration ?? 0;
    this.#clock = deps.clock;
    const b = policy.bulkhead;
    this.bulkhead =
      b === undefined
        ? undefined
        : createBulkheadRuntime(b, {
            clock: deps.clock,
            key: this.key,
            digest: deps.digest,
            policy: policy.name,
            route,
            hooks: deps.bulkheadHooks(policy.name, route),
          });
    const t = policy.adaptiveThrottle?.options;
    this.throttle =
      t === undefined
        ? undefined
        : new AdaptiveThrottle({ k: t.k, window: t.window, minThroughput: t.minThroughput });
    const rb = policy.retry?.options.budget;
    this.retryBudget = rb === undefined ? undefined : new RetryBudgetState(rb.options);
    const h = policy.hedge;
    const hb = h?.options.budget;
    this.hedgeBudget = hb === undefined ? undefined : new RetryBudgetState(hb.options);
    const q = h?.options.adaptiveDelayQuantile;
    this.hedgeLatency = q === undefined ? undefined : new WindowedP2Quantile(q, { window: 512 });
  }

  /**
   * Records the breaker state seen by a call of this key. After a retune, calls in flight finish on the state they
   * hold, but the breaker they trip is the key's, so the state reaches the current runtime's key too: otherwise
   * that key would read closed, count as idle and be evicted with the open breaker in it.
   */
  sawBreaker(state: BreakerState): void {
    // The clock is read only when the state changes (never on the closed fast path).
    if (state === this.breakerState && this.successor === undefined) return;
    const at = state === 'closed' ? 0 : this.#clock.now();
    this.#see(state, at);
    for (let next = this.successor; next !== undefined; next = next.successor) next.#see(state, at);
  }

  #see(state: BreakerState, at: number): void {
    if (this.breakerState === state) return;
    this.breakerState = state;
    this.breakerSeenAt = at;
  }

  /**
   * Whether the key is forced open now, by its own flag or its policy's route-less one, as the latest retune holds
   * them: a call in flight holds the key it started on, and an operator acts on the current runtime's key.
   */
  forcedNow(): boolean {
    let latest = this.successor;
    if (latest === undefined) return this.forcedOpen || this.owner.forcedAll;
    while (latest.successor !== undefined) latest = latest.successor;
    return latest.forcedOpen || latest.owner.forcedAll;
  }

  /** An idle key can be dropped without losing anything that matters. */
  evictable(now: number): boolean {
    const b = this.bulkhead;
    return (
      this.inflight === 0 &&
      this.#foreign === 0 &&
      !this.forcedOpen &&
      (this.breakerState === 'closed' || now >= this.breakerSeenAt + this.#breakDuration) &&
      // Slots and waiters a retune carried over belong to calls counted on the old key.
      (b === undefined || (b.inUse === 0 && b.waiting === 0))
    );
  }

  /** When a key pinned by its breaker becomes evictable; Infinity for a key pinned by anything else. */
  pinnedUntil(): number {
    const b = this.bulkhead;
    if (
      this.inflight > 0 ||
      this.#foreign > 0 ||
      this.forcedOpen ||
      (b !== undefined && (b.inUse > 0 || b.waiting > 0))
    )
      return Infinity;
    return this.breakerState === 'closed' ? -Infinity : this.breakerSeenAt + this.#breakDuration;
  }

  /** One call or stream of this key finished; the last one may make the key evictable, which the sweep must hear. */
  release(): void {
    if (--this.inflight === 0) this.owner.unpinned++;
  }

  /** One call (not a stream) of this key finished. */
  callEnded(): void {
    this.#forwardEnded();
    this.release();
  }

  runningAdded(n: number): void {
    this.#foreign += n;
    const to = this.#carriedTo;
    if (to === undefined) return;
    this.#carried += n;
    to.runningAdded(n);
  }

  runningEnded(): void {
    this.#forwardEnded();
    if (--this.#foreign === 0) this.owner.unpinned++;
  }

  #forwardEnded(): void {
    if (this.#carried === 0) return;
    this.#carried--;
    this.#carriedTo!.runningEnded();
  }

  /**
   * A retune replaced this key with `next`: the calls still running here keep counting against whatever limits
   * `next` (SPEC §4: the limit counts every running call; a newcomer never overtakes). Held slots and parked waiters
   * move to `next`'s bulkhead; without one they go at once and count as running on `next`, so that a bulkhead added
   * by a later retune still counts them. Streams never take a slot; a hedged call counts once.
   */
  carryCallsTo(next: KeyState): void {
    const b = this.bulkhead;
    if (b !== undefined) {
      if (next.bulkhead !== undefined) b.handOver(next.bulkhead);
      else b.dissolve(next);
      return;
    }
    const to = next.bulkhead ?? next;
    this.#carriedTo = to;
    const running = this.inflight - this.streams + this.#foreign;
    if (running <= 0) return;
    this.#carried = running;
    to.runningAdded(running);
  }
}

/**
 * One registered policy and its keys. Retune replaces the whole runtime (fresh adaptive state); calls in flight keep
 * the `KeyState` they captured and finish on it (SPEC §6).
 */
export class PolicyRuntime {
  readonly keys = new Map<string | undefined, KeyState>();
  /**
   * Route-less force-open: every route, including ones first seen later. Checked at run time rather than copied
   * onto each new key, so it pins no key against eviction (memory stays bounded while it is on).
   */
  forcedAll = false;
  /** An operator's `setMode` (SPEC §14.3), which outlives retunes; `undefined`: the policy's own `mode`. */
  modeOverride: PolicyMode | undefined = undefined;
  /** The mode in force is `shadow`: decisions are reported, never enforced (read once per call). */
  shadow: boolean;
  /**
   * Bumped whenever a key may have become evictable (its last call ended, an operator cleared a force-open or reset a
   * breaker). A sweep that finds every key pinned is not repeated until this moves: without it a burst of busy keys
   * made each new key rescan the whole map, quadratic in the burst (5000 keys ≈ 25M steps).
   */
  unpinned = 0;
  #allPinnedAt = -1;
  /** After a sweep found every key pinned: when the first key pinned only by its breaker becomes evictable. */
  #retryAt = Infinity;
  /**
   * The chaos settings in force (SPEC §14.3): the policy's `ChaosStrategy` options, or what an operator set at run
   * time; `undefined` when neither. Changed only through admin/chaos-settings.ts, which keeps `chaosArmed` in step.
   */
  chaos: ResolvedChaosOptions | undefined;
  /** `chaos` while it is enabled and injects something, else `undefined`: the one field an attempt reads. */
  chaosArmed: ResolvedChaosOptions | undefined;
  /** Set when an operator changed `chaos` at run time: a retune keeps their settings (as it keeps `forcedAll`). */
  chaosOverride = false;
  readonly breakerParams: BreakerParams | undefined;
  readonly rateParams: RateLimitParams | undefined;
  readonly digestParams: DigestParams | undefined;
  /**
   * No strategy of the policy reads the clock when a call starts (no rate limit, bulkhead, breaker, throttle,
   * timeout or hedge): a call that nobody listens to and that runs under no deadline skips that read (≈ 40 ns).
   */
  readonly startsWithoutClock: boolean;

  constructor(
    readonly policy: ResiliencePolicy,
    readonly maxKeys: number,
    readonly deps: KeyDeps,
  ) {
    this.shadow = policy.mode === 'shadow';
    const cb = policy.circuitBreaker?.options;
    this.breakerParams =
      cb === undefined
        ? undefined
        : Object.freeze({
            failureRatio: cb.failureRatio,
            samplingWindow: cb.samplingWindow,
            minThroughput: cb.minThroughput,
            breakDuration: cb.breakDuration,
            halfOpenMaxCalls: cb.halfOpenMaxCalls,
            ...(cb.maxBreakDuration === undefined
              ? {}
              : {
                  maxBreakDuration: cb.maxBreakDuration,
                  breakDurationMultiplier: cb.breakDurationMultiplier,
                }),
          });
    const rl = policy.rateLimit?.options;
    this.rateParams =
      rl === undefined ? undefined : Object.freeze({ permits: rl.permits, per: rl.per, burst: rl.burst });
    const ab = policy.bulkhead?.type === 'adaptiveBulkhead' ? policy.bulkhead.options : undefined;
    this.digestParams =
      ab?.latencyQuantile === undefined
        ? undefined
        : Object.freeze({ quantile: ab.latencyQuantile, window: ab.window });
    this.chaos = policy.chaos?.options;
    this.chaosArmed = armedChaos(this.chaos);
    this.startsWithoutClock =
      policy.rateLimit === undefined &&
      policy.bulkhead === undefined &&
      policy.circuitBreaker === undefined &&
      policy.adaptiveThrottle === undefined &&
      policy.timeout === undefined &&
      policy.hedge === undefined;
  }

  /** Sets (or, with `undefined`, drops) the operator's mode override. */
  setMode(mode: PolicyMode | undefined): void {
    this.modeOverride = mode;
    this.shadow = (mode ?? this.policy.mode) === 'shadow';
  }

  /** The mode in force. */
  get mode(): PolicyMode {
    return this.shadow ? 'shadow' : 'enforce';
  }

  /** The state of `route`, created on first use; the least recently used idle key is evicted past `maxKeys`. */
  key(route: string | undefined): KeyState {
    let ks = this.keys.get(route);
    if (ks !== undefined) {
      ks.touched = true;
      return ks;
    }
    // Evict down to the bound, not just one: after a burst of busy (unevictable) keys the map returns to it.
    if (this.keys.size >= this.maxKeys) {
      const now = this.deps.clock.now();
      if (this.#allPinnedAt !== this.unpinned || now >= this.#retryAt) {
        while (this.keys.size >= this.maxKeys && this.#evictOne(now));
        if (this.keys.size >= this.maxKeys) {
          this.#allPinnedAt = this.unpinned;
          let retryAt = Infinity;
          for (const k of this.keys.values()) {
            const until = k.pinnedUntil();
            if (until < retryAt) retryAt = until;
          }
          this.#retryAt = retryAt;
        }
      }
    }
    ks = new KeyState(this.policy, route, this.deps, this);
    this.keys.set(route, ks);
    return ks;
  }

  /**
   * The state of `route` if it is known, else a fresh one that is not registered (nothing is evicted for it): what
   * the control plane reports for a key no call has used yet.
   */
  peek(route: string | undefined): KeyState {
    return this.keys.get(route) ?? new KeyState(this.policy, route, this.deps, this);
  }

  /**
   * CLOCK (second-chance) eviction over insertion order: amortised O(1) and no per-call reordering. Keys that are
   * busy or forced open are never evicted, nor keys whose breaker is open or half-open until `breakDuration` after
   * it was seen so; if every key is pinned the map grows.
   */
  #evictOne(now: number): boolean {
    for (let pass = 0; pass < 2; pass++) {
      for (const [route, ks] of this.keys) {
        if (!ks.evictable(now)) continue;
        if (ks.touched && pass === 0) {
          ks.touched = false;
          continue;
        }
        this.keys.delete(route);
        this.deps.evicted(ks.key);
        return true;
      }
    }
    return false;
  }
}
