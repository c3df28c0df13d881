import type { RateLimitParams, RateLimitResult, RateLimitStore, StateKey } from '@ballast/core';
import { RATE_LIMIT, RATE_LIMIT_RESET } from './lua/rate-limit-scripts';
import type { RedisClient } from './redis-commands';
import { ScriptRunner } from './redis-script-runner';
import {
  OptionCheck,
  clockArg,
  keyBase,
  replyNumber,
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';

export type RedisRateLimitStoreOptions = RedisStoreOptions;

/**
 * A {@link RateLimitStore} shared by every replica: one token bucket per (policy, route) in a Redis hash
 * (`<prefix>:{<key.id>}:rl`), taken from by one atomic script, so the fleet as a whole admits at most
 * `burst + permits/per · t` calls in any span `t` — never N× the rate for N replicas. A denied take answers the
 * exact wait until `n` tokens exist (`retryAfter`, for `Retry-After`).
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly options: ResolvedRedisStoreOptions;
  readonly #runner: ScriptRunner;

  constructor(client: RedisClient, options: RedisRateLimitStoreOptions = {}) {
    const check = new OptionCheck('redisRateLimitStore');
    this.options = Object.freeze(resolveRedisStoreOptions(check, options));
    check.throwIfAny();
    this.#runner = new ScriptRunner(client, 'rateLimit', this.options.commandTimeout);
  }

  async take(key: StateKey, params: RateLimitParams, now: number, n = 1): Promise<RateLimitResult> {
    const [ok, tokens, retryAfter] = await this.#run('take', key, params, now, n);
    // Number(): a client created with `stringNumbers: true` answers Lua integers as strings ('1')
    return Number(ok) === 1
      ? { ok: true, tokens: replyNumber(tokens) }
      : { ok: false, tokens: replyNumber(tokens), retryAfter: replyNumber(retryAfter) };
  }

  async tokens(key: StateKey, params: RateLimitParams, now: number): Promise<number> {
    return replyNumber((await this.#run('tokens', key, params, now, 0))[1]);
  }

  async reset(key: StateKey): Promise<void> {
    await this.#runner.run('reset', RATE_LIMIT_RESET, 1, [`${keyBase(this.options.prefix, key)}:rl`]);
  }

  async #run(
    op: 'take' | 'tokens',
    key: StateKey,
    params: RateLimitParams,
    now: number,
    n: number,
  ): Promise<[number | string, string, string]> {
    return (await this.#runner.run(op, RATE_LIMIT, 1, [
      `${keyBase(this.options.prefix, key)}:rl`,
      clockArg(this.options.time, now),
      params.permits,
      params.per,
      params.burst,
      n,
      op,
    ])) as [number | string, string, string];
  }
}

/** Creates a {@link RedisRateLimitStore} (SPEC §7). */
export function redisRateLimitStore(
  client: RedisClient,
  options?: RedisRateLimitStoreOptions,
): RedisRateLimitStore {
  return new RedisRateLimitStore(client, options);
}
