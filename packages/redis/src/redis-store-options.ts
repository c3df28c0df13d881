import { ResilienceError, formatValue, parseDuration, type Duration, type StateKey } from '@ballast/core';

/** Options every Redis store takes (SPEC §11.16). Durations are ms or strings such as `'250ms'`. */
export interface RedisStoreOptions {
  /** First segment of every key (default `'ballast'`); must not contain `{` or `}` (the hash tag follows it). */
  readonly prefix?: string;
  /** Longest wait for a reply before the call fails with a `RedisStoreError` (default 250 ms; 0 = no bound). */
  readonly commandTimeout?: Duration;
  /**
   * Whose clock the scripts read. `'server'` (default): Redis `TIME`, one clock for the whole fleet. `'caller'`: the
   * `now` passed to each call — a testing aid for deterministic tests on a fake clock; in production, replicas'
   * monotonic clocks are unrelated, so never mix it with real traffic.
   */
  readonly time?: 'server' | 'caller';
  /** How long an idle key lives (default 1 h); each store extends it where its state needs longer. */
  readonly keyTtl?: Duration;
}

export interface ResolvedRedisStoreOptions {
  readonly prefix: string;
  readonly commandTimeout: number;
  readonly time: 'server' | 'caller';
  readonly keyTtl: number;
}

/** Collects every option violation, then throws one `configuration` error naming them all (SPEC §2). */
export class OptionCheck {
  readonly #problems: string[] = [];
  constructor(private readonly owner: string) {}

  check(ok: boolean, field: string, constraint: string, value: unknown): this {
    if (!ok) this.#problems.push(`${field} must be ${constraint}, got ${formatValue(value)}`);
    return this;
  }

  /** Parses a duration option, recording a problem (and answering `fallback`) when it is invalid. */
  duration(field: string, value: Duration | undefined, fallback: number): number {
    if (value === undefined) return fallback;
    try {
      return parseDuration(value);
    } catch {
      this.check(false, field, "a duration (ms ≥ 0 or a string like '250ms')", value);
      return fallback;
    }
  }

  throwIfAny(): void {
    if (this.#problems.length === 0) return;
    throw new ResilienceError({
      kind: 'configuration',
      message: `${this.owner}: ${this.#problems.join('; ')}`,
      details: { problems: [...this.#problems] },
    });
  }
}

export const DEFAULT_COMMAND_TIMEOUT = 250;
export const DEFAULT_KEY_TTL = 3_600_000;

export function resolveRedisStoreOptions(
  check: OptionCheck,
  options: RedisStoreOptions,
): ResolvedRedisStoreOptions {
  const prefix = options.prefix ?? 'ballast';
  const time = options.time ?? 'server';
  const commandTimeout = check.duration('commandTimeout', options.commandTimeout, DEFAULT_COMMAND_TIMEOUT);
  const keyTtl = check.duration('keyTtl', options.keyTtl, DEFAULT_KEY_TTL);
  check
    .check(
      typeof prefix === 'string' && prefix.length > 0 && !/[{}]/.test(prefix),
      'prefix',
      'a non-empty string without { or }',
      prefix,
    )
    .check(time === 'server' || time === 'caller', 'time', "'server' or 'caller'", time)
    .check(Number.isFinite(keyTtl) && keyTtl >= 1000, 'keyTtl', 'a finite duration ≥ 1s', options.keyTtl);
  // Whole ms: PEXPIRE and SET PX take integers, and '2.3h' parses to 8279999.999… ms.
  return { prefix, time, commandTimeout, keyTtl: redisTtl(keyTtl) };
}

/**
 * The longest TTL the stores set: 2^53 − 1 ms (285,000 years, i.e. never). Redis refuses an expiry past 2^63 ms
 * ('ERR value is not an integer or out of range'), so a longer duration that validation accepts (a `keyTtl`, or a
 * `breakDuration` of `Number.MAX_VALUE` meaning "until reset") would fail every write.
 */
export const MAX_TTL = Number.MAX_SAFE_INTEGER;

/** A TTL argument for PEXPIRE / SET PX: whole ms, at most {@link MAX_TTL}. */
export const redisTtl = (ms: number): number => Math.min(Math.ceil(ms), MAX_TTL);

/**
 * `prefix:{id}` — the braces make `id` the Redis Cluster hash tag, so every key of one (policy, route) lives in one
 * slot and each script touches a single slot. `StateKey.id` is URI-encoded, so it never contains a brace itself.
 */
export const keyBase = (prefix: string, key: StateKey): string => `${prefix}:{${key.id}}`;

/** The `now` argument of a script: empty asks the script to read the server's `TIME`. */
export const clockArg = (time: 'server' | 'caller', now: number): string | number =>
  time === 'caller' ? now : '';

/** Parses a number a script returned as a string (Lua numbers would be truncated to integers in the reply). */
export function replyNumber(value: unknown): number {
  if (value === 'inf') return Infinity;
  if (value === '-inf') return -Infinity;
  return Number(value);
}
