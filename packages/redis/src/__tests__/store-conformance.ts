import {
  describeCircuitBreakerStoreConformance,
  describeControlStoreConformance,
  describeLatencyDigestStoreConformance,
  describeRateLimitStoreConformance,
} from '@ballast/testing';
import type { RedisClient } from '../redis-commands';
import { RedisCircuitBreakerStore } from '../redis-circuit-breaker-store';
import { RedisControlStore, type RedisControlStoreOptions } from '../redis-control-store';
import { RedisLatencyDigestStore } from '../redis-latency-digest-store';
import { RedisRateLimitStore } from '../redis-rate-limit-store';

/**
 * Registers the four store conformance suites of @ballast/testing on one client — the same suites core's in-memory
 * stores pass. `time: 'caller'` makes the scripts use the suite's virtual `now`, so every rule (window edges, break
 * expiry, lease reclaim) is checked deterministically. Each control-store test gets a prefix of its own, so it starts
 * from an empty control plane. `pubsub: 'sharded'` registers the control store's suite only, its notices sharded.
 */
export function describeStoreConformance(
  label: string,
  client: () => RedisClient,
  prefix: string,
  extra: {
    subscriber?: RedisControlStoreOptions['subscriber'];
    concurrency?: number;
    /** `'sharded'`: the control store's suite only, with SPUBLISH/SSUBSCRIBE notices. */
    pubsub?: RedisControlStoreOptions['pubsub'];
  } = {},
): void {
  const options = {
    timeout: 30_000,
    ...(extra.concurrency === undefined ? {} : { concurrency: extra.concurrency }),
  };
  const storeOptions = { prefix, time: 'caller', commandTimeout: 5000 } as const;
  if (extra.pubsub !== 'sharded') describeDataStoreConformance(label, client, storeOptions, options);
  let controlStores = 0;
  describeControlStoreConformance(
    `RedisControlStore (${label})`,
    () => ({
      store: new RedisControlStore(client(), {
        ...storeOptions,
        prefix: `${prefix}:c${++controlStores}`,
        ...(extra.subscriber === undefined ? {} : { subscriber: extra.subscriber }),
        ...(extra.pubsub === undefined ? {} : { pubsub: extra.pubsub }),
      }),
    }),
    options,
  );
}

function describeDataStoreConformance(
  label: string,
  client: () => RedisClient,
  storeOptions: { prefix: string; time: 'caller'; commandTimeout: number },
  options: { timeout: number; concurrency?: number },
): void {
  describeCircuitBreakerStoreConformance(
    `RedisCircuitBreakerStore (${label})`,
    () => ({ store: new RedisCircuitBreakerStore(client(), storeOptions) }),
    options,
  );
  describeRateLimitStoreConformance(
    `RedisRateLimitStore (${label})`,
    () => ({ store: new RedisRateLimitStore(client(), storeOptions) }),
    options,
  );
  describeLatencyDigestStoreConformance(
    `RedisLatencyDigestStore (${label})`,
    () => ({ store: new RedisLatencyDigestStore(client(), storeOptions) }),
    options,
  );
}
