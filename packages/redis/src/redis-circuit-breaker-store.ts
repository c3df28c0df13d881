import type {
  BreakerAdmission,
  BreakerOutcome,
  BreakerParams,
  BreakerPermit,
  BreakerRecordResult,
  BreakerSnapshot,
  BreakerState,
  BreakerTransition,
  CircuitBreakerStore,
  Duration,
  StateKey,
} from '@ballast/core';
import { BREAKER_ACQUIRE, BREAKER_INSPECT, BREAKER_RECORD, BREAKER_RESET } from './lua/breaker-scripts';
import type { RedisClient } from './redis-commands';
import { ScriptRunner } from './redis-script-runner';
import {
  OptionCheck,
  clockArg,
  keyBase,
  redisTtl,
  replyNumber,
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';

export interface RedisCircuitBreakerStoreOptions extends RedisStoreOptions {
  /**
   * When > 0, a closed state read from Redis is reused locally for this long (ms on the caller's clock) instead of
   * asking again on every `acquire` (SPEC §11.16: off by default). The price is staleness: for up to this long after
   * another replica trips the breaker, this replica still admits calls; their outcomes carry the old generation and
   * are ignored. Every outcome is still recorded in Redis, and a transition seen here drops the entry at once.
   */
  readonly localCacheTtl?: Duration;
}

const TRANSITIONS: Record<string, BreakerTransition> = {
  'open>half_open': Object.freeze({ from: 'open', to: 'half_open' }),
  'closed>open': Object.freeze({ from: 'closed', to: 'open' }),
  'half_open>open': Object.freeze({ from: 'half_open', to: 'open' }),
  'half_open>closed': Object.freeze({ from: 'half_open', to: 'closed' }),
};
const transitionOf = (from: unknown, to: BreakerState): BreakerTransition | undefined =>
  from === '' || from === null || from === undefined ? undefined : TRANSITIONS[`${String(from)}>${to}`];

/** A transition to open carries the calls and failures that opened it (built only then: a rare event). */
function openedBy(t: BreakerTransition, calls: unknown, failures: unknown): BreakerTransition {
  const c = Number(calls);
  return Object.freeze({
    from: t.from,
    to: t.to,
    failureRatio: c === 0 ? 0 : Number(failures) / c,
    calls: c,
  });
}

interface CachedClosed {
  readonly generation: number;
  readonly until: number;
  readonly admission: BreakerAdmission;
}

/**
 * A {@link CircuitBreakerStore} shared by every replica through Redis. Each operation is one Lua script, so the
 * rolling window, the trip decision, the lazy open → half-open move and the fleet-wide probe leases (exactly
 * `halfOpenMaxCalls` across all replicas) are atomic. Keys: `<prefix>:{<key.id>}:cb` (state) and `…:cbl` (leases),
 * expiring after `keyTtl` idle (at least twice the sampling window and break duration).
 */
export class RedisCircuitBreakerStore implements CircuitBreakerStore {
  readonly options: ResolvedRedisStoreOptions & { readonly localCacheTtl: number };
  readonly #runner: ScriptRunner;
  readonly #cache = new Map<string, CachedClosed>();

  constructor(client: RedisClient, options: RedisCircuitBreakerStoreOptions = {}) {
    const check = new OptionCheck('redisCircuitBreakerStore');
    const base = resolveRedisStoreOptions(check, options);
    const localCacheTtl = check.duration('localCacheTtl', options.localCacheTtl, 0);
    check.throwIfAny();
    this.options = Object.freeze({ ...base, localCacheTtl });
    this.#runner = new ScriptRunner(client, 'circuitBreaker', base.commandTimeout);
  }

  acquire(key: StateKey, params: BreakerParams, now: number): BreakerAdmission | Promise<BreakerAdmission> {
    if (this.options.localCacheTtl > 0) {
      const hit = this.#cache.get(key.id);
      if (hit !== undefined && now < hit.until) return hit.admission;
    }
    return this.#acquire(key, params, now);
  }

  async #acquire(key: StateKey, params: BreakerParams, now: number): Promise<BreakerAdmission> {
    const reply = (await this.#runner.run('acquire', BREAKER_ACQUIRE, 2, [
      ...this.#keys(key),
      clockArg(this.options.time, now),
      params.breakDuration,
      params.halfOpenMaxCalls,
      this.#ttl(params),
      params.maxBreakDuration ?? '',
    ])) as [number | string, BreakerState, number | string, string, string, string];
    const [admitted, state, generation, lease, retryAfter, from] = reply;
    const transition = transitionOf(from, state);
    // Number(): a client created with `stringNumbers: true` answers Lua integers as strings ('1')
    if (Number(admitted) !== 1) {
      this.#cache.delete(key.id);
      return { admitted: false, state, retryAfter: replyNumber(retryAfter), transition };
    }
    const admission: BreakerAdmission = {
      admitted: true,
      state,
      generation: Number(generation),
      lease: lease === '' ? undefined : lease,
      transition,
    };
    if (this.options.localCacheTtl > 0 && state === 'closed') {
      this.#cache.set(key.id, {
        generation: admission.generation,
        until: now + this.options.localCacheTtl,
        admission,
      });
    }
    return admission;
  }

  async record(
    key: StateKey,
    params: BreakerParams,
    permit: BreakerPermit,
    outcome: BreakerOutcome,
    now: number,
  ): Promise<BreakerRecordResult> {
    const reply = (await this.#runner.run('record', BREAKER_RECORD, 2, [
      ...this.#keys(key),
      clockArg(this.options.time, now),
      params.samplingWindow,
      params.minThroughput,
      params.failureRatio,
      params.breakDuration,
      params.halfOpenMaxCalls,
      this.#ttl(params),
      permit.generation,
      permit.lease ?? '',
      outcome,
      params.maxBreakDuration ?? '',
      params.breakDurationMultiplier ?? 2,
    ])) as [BreakerState, string, (number | string)?, (number | string)?];
    const [state, from, calls, failures] = reply;
    let transition = transitionOf(from, state);
    if (transition !== undefined && calls !== undefined) transition = openedBy(transition, calls, failures);
    if (transition !== undefined || state !== 'closed') this.#cache.delete(key.id);
    return { state, transition };
  }

  async inspect(key: StateKey, params: BreakerParams, now: number): Promise<BreakerSnapshot> {
    const reply = (await this.#runner.run('inspect', BREAKER_INSPECT, 2, [
      ...this.#keys(key),
      clockArg(this.options.time, now),
      params.samplingWindow,
      params.breakDuration,
      params.maxBreakDuration ?? '',
    ])) as [BreakerState, number | string, number | string, number | string, string];
    const [state, generation, , , retryAfter] = reply;
    const calls = Number(reply[2]);
    const failureRatio = calls === 0 ? 0 : Number(reply[3]) / calls;
    const snapshot = { state, generation: Number(generation), calls, failureRatio };
    return retryAfter === '' || retryAfter === undefined
      ? snapshot
      : { ...snapshot, retryAfter: replyNumber(retryAfter) };
  }

  async reset(key: StateKey, _now: number): Promise<void> {
    this.#cache.delete(key.id);
    await this.#runner.run('reset', BREAKER_RESET, 2, [...this.#keys(key), this.options.keyTtl]);
  }

  /** Drops the local cache entry only: Redis keys expire on their own (`keyTtl`). */
  evict(key: StateKey): void {
    this.#cache.delete(key.id);
  }

  #keys(key: StateKey): [string, string] {
    const base = keyBase(this.options.prefix, key);
    return [`${base}:cb`, `${base}:cbl`];
  }

  #ttl(params: BreakerParams): number {
    const longestBreak = Math.max(params.breakDuration, params.maxBreakDuration ?? 0);
    return redisTtl(Math.max(this.options.keyTtl, 2 * params.samplingWindow, 2 * longestBreak));
  }
}

/** Creates a {@link RedisCircuitBreakerStore} (SPEC §7). */
export function redisCircuitBreakerStore(
  client: RedisClient,
  options?: RedisCircuitBreakerStoreOptions,
): RedisCircuitBreakerStore {
  return new RedisCircuitBreakerStore(client, options);
}
