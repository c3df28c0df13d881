import {
  describeCircuitBreakerStoreConformance,
  describeControlStoreConformance,
  describeLatencyDigestStoreConformance,
  describeRateLimitStoreConformance,
} from '@ballast/testing';
import type { Redis } from 'ioredis';
import {
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { RedisCircuitBreakerStore } from './redis-circuit-breaker-store';
import { RedisControlStore } from './redis-control-store';
import { RedisLatencyDigestStore } from './redis-latency-digest-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';

// The same suites core's in-memory stores pass, on the real Redis. `time: 'caller'` makes the scripts use the
// suite's virtual `now`, so every rule (window edges, break expiry, lease reclaim) is checked deterministically.
if (RUN_REDIS_TESTS) {
  const prefix = uniquePrefix('conformance');
  let client: Redis | undefined;
  const redis = (): Redis => (client ??= newClient());
  beforeAll(() => requireRedis(redis()));
  afterAll(() => cleanUp(prefix, [client]));
  const options = { timeout: 30_000 };
  const storeOptions = { prefix, time: 'caller', commandTimeout: 5000 } as const;

  it('runs on the real Redis server', async () => {
    expect(await redis().ping()).toBe('PONG');
  });

  describeCircuitBreakerStoreConformance(
    'RedisCircuitBreakerStore (caller time)',
    () => ({ store: new RedisCircuitBreakerStore(redis(), storeOptions) }),
    options,
  );
  describeRateLimitStoreConformance(
    'RedisRateLimitStore (caller time)',
    () => ({ store: new RedisRateLimitStore(redis(), storeOptions) }),
    options,
  );
  describeLatencyDigestStoreConformance(
    'RedisLatencyDigestStore',
    () => ({ store: new RedisLatencyDigestStore(redis(), storeOptions) }),
    options,
  );
  // Each test starts from an empty control plane: a prefix of its own (deleted with the run's keys).
  let controlStores = 0;
  const subscribers: Redis[] = [];
  afterAll(() => subscribers.forEach((s) => s.disconnect()));
  describeControlStoreConformance(
    'RedisControlStore (caller time)',
    () => ({
      store: new RedisControlStore(redis(), {
        ...storeOptions,
        prefix: `${prefix}:c${++controlStores}`,
        subscriber: () => {
          const s = redis().duplicate();
          subscribers.push(s);
          return s;
        },
      }),
    }),
    options,
  );
} else {
  describe('Redis store conformance', () => reportRedisUnreachable());
}
