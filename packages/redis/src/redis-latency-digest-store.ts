import { randomBytes } from 'node:crypto';
import { DDSketch } from '@datadog/sketches-js';
import type { DigestParams, LatencyDigestStore, StateKey } from '@ballast/core';
import { DIGEST_OBSERVE, DIGEST_READ, DIGEST_RESET } from './lua/digest-scripts';
import type { RedisClient } from './redis-commands';
import { ScriptRunner } from './redis-script-runner';
import {
  OptionCheck,
  keyBase,
  resolveRedisStoreOptions,
  type RedisStoreOptions,
  type ResolvedRedisStoreOptions,
} from './redis-store-options';

const DEFAULT_RELATIVE_ACCURACY = 0.01;

export interface RedisLatencyDigestStoreOptions extends RedisStoreOptions {
  /** DDSketch relative accuracy in (0, 1) (default 0.01: estimates within 1 % of a true sample value). */
  readonly relativeAccuracy?: number;
}

/**
 * A {@link LatencyDigestStore} shared by the fleet: per (policy, route, quantile), a DDSketch of the current epoch
 * whose bucket counts every replica adds to. Every `window` samples (fleet-wide) the epoch closes, its quantile
 * becomes the estimate and a fresh epoch starts — so old latency ages out like `WindowedP2Quantile`. The estimate is
 * always from the last *full* epoch: undefined until one has completed (after a start or a `reset`).
 *
 * Keys: `<prefix>:{<key.id>}:dd:<q>` (meta), `…:dd:<q>:b` (bucket counts, about `log(max/min)/log(γ)` fields),
 * `…:dd:r` (reset token); `<q>` is followed by `@<relativeAccuracy>` when that is not the default 0.01. `time` is
 * not used: epochs are counted in samples.
 */
export class RedisLatencyDigestStore implements LatencyDigestStore {
  readonly options: ResolvedRedisStoreOptions & { readonly relativeAccuracy: number };
  readonly #runner: ScriptRunner;
  /** The LogarithmicMapping of a sketches-js DDSketch: Redis counts are bins of exactly that sketch. */
  readonly #mapping: DDSketch['mapping'];
  /**
   * Bucket indexes only mean something under the mapping that made them: replicas whose `relativeAccuracy` differs
   * (mid-deploy) keep separate sketches (`…:dd:<q>@<accuracy>`, none for the default), instead of mixing indexes
   * into one sketch that each decodes with its own mapping (100 ms read back as 2.5 ms).
   */
  readonly #accuracyTag: string;

  constructor(client: RedisClient, options: RedisLatencyDigestStoreOptions = {}) {
    const check = new OptionCheck('redisLatencyDigestStore');
    const base = resolveRedisStoreOptions(check, options);
    const relativeAccuracy = options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY;
    check.check(
      relativeAccuracy > 0 && relativeAccuracy < 1,
      'relativeAccuracy',
      'in (0, 1)',
      relativeAccuracy,
    );
    check.throwIfAny();
    this.options = Object.freeze({ ...base, relativeAccuracy });
    this.#runner = new ScriptRunner(client, 'latencyDigest', base.commandTimeout);
    this.#mapping = new DDSketch({ relativeAccuracy }).mapping;
    this.#accuracyTag = relativeAccuracy === DEFAULT_RELATIVE_ACCURACY ? '' : `@${relativeAccuracy}`;
  }

  async observe(
    key: StateKey,
    params: DigestParams,
    latency: number,
    now: number,
  ): Promise<number | undefined> {
    // Like WindowedP2Quantile, a non-finite sample is ignored; latencies ≤ the smallest indexable value count as 0.
    if (!Number.isFinite(latency)) return this.read(key, params, now);
    const field = latency > this.#mapping.minPossible ? String(this.#mapping.key(latency)) : 'z';
    const reply = await this.#runner.run('observe', DIGEST_OBSERVE, 3, [
      ...this.#keys(key, params),
      field,
      params.window,
      params.quantile,
      this.options.keyTtl,
    ]);
    return this.#value(reply);
  }

  async read(key: StateKey, params: DigestParams, _now: number): Promise<number | undefined> {
    const reply = await this.#runner.run('read', DIGEST_READ, 3, [...this.#keys(key, params), params.window]);
    return this.#value(reply);
  }

  async reset(key: StateKey, _now: number): Promise<void> {
    const token = randomBytes(8).toString('hex');
    await this.#runner.run('reset', DIGEST_RESET, 1, [
      `${keyBase(this.options.prefix, key)}:dd:r`,
      token,
      this.options.keyTtl,
    ]);
  }

  #keys(key: StateKey, params: DigestParams): [string, string, string] {
    const base = `${keyBase(this.options.prefix, key)}:dd`;
    const meta = `${base}:${params.quantile}${this.#accuracyTag}`;
    return [meta, `${meta}:b`, `${base}:r`];
  }

  #value(reply: unknown): number | undefined {
    if (reply === '' || reply === null || reply === undefined) return undefined;
    return reply === 'z' ? 0 : this.#mapping.value(Number(reply));
  }
}

/** Creates a {@link RedisLatencyDigestStore} (SPEC §7). */
export function redisLatencyDigestStore(
  client: RedisClient,
  options?: RedisLatencyDigestStoreOptions,
): RedisLatencyDigestStore {
  return new RedisLatencyDigestStore(client, options);
}
