import { DDSketch } from '@datadog/sketches-js';
import { isResilienceError, stateKey, type BreakerParams } from '@ballast/core';
import type { Cluster, Redis } from 'ioredis';
import { RUN_TOPOLOGY_TESTS } from './__tests__/clients';
import { RedisServerProcess, freePort } from './__tests__/redis-server-process';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  scanKeys,
  uniquePrefix,
} from './__tests__/redis-test-env';
import {
  RedisStoreError,
  isRedisStoreError,
  redisCircuitBreakerStore,
  redisControlStore,
  redisLatencyDigestStore,
  redisRateLimitStore,
  type RedisScriptClient,
} from './index';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const breaker: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 10_000,
  minThroughput: 4,
  // Long enough that a loaded CI machine cannot let it pass between the trip and the check that it is open.
  breakDuration: 1000,
  halfOpenMaxCalls: 1,
};

/** Compile-time: ioredis's standalone/Sentinel `Redis` and its `Cluster` both satisfy the structural client type. */
const clients: Array<(c: Redis | Cluster) => RedisScriptClient> = [(c) => c];

describe('Redis store options', () => {
  it('accepts any ioredis client shape (Redis, Sentinel, Cluster)', () => {
    expect(clients).toHaveLength(1);
  });

  // Options are checked when a store is made, before any command: a client that never connects is enough.
  const fake = newClient(REDIS_URL, { lazyConnect: true });
  afterAll(() => fake.disconnect());

  it('reports every invalid option in one configuration error', () => {
    let error: unknown;
    try {
      redisCircuitBreakerStore(fake, {
        prefix: 'a{b}',
        commandTimeout: '-1s',
        time: 'wall' as 'server',
        keyTtl: 10,
      });
    } catch (e) {
      error = e;
    }
    expect(isResilienceError(error) && error.kind).toBe('configuration');
    expect((error as Error).message).toMatch(/prefix must be .*; time must be .*; keyTtl must be/);
    expect((error as Error).message).toMatch(/commandTimeout must be a duration/);
  });

  it('prints the given values as core does: NaN and Infinity as themselves, strings single-quoted', () => {
    const messageOf = (create: () => unknown): string => {
      try {
        create();
      } catch (e) {
        expect(isResilienceError(e) && e.kind).toBe('configuration');
        return (e as Error).message;
      }
      throw new Error('expected a configuration error');
    };
    const duration = "a duration (ms ≥ 0 or a string like '250ms')";
    expect(
      messageOf(() =>
        redisLatencyDigestStore(fake, {
          commandTimeout: Number.NaN,
          keyTtl: Infinity,
          relativeAccuracy: Number.NaN,
        }),
      ),
    ).toBe(
      `redisLatencyDigestStore: commandTimeout must be ${duration}, got NaN; keyTtl must be ${duration}, got Infinity; ` +
        'relativeAccuracy must be in (0, 1), got NaN',
    );
    expect(messageOf(() => redisLatencyDigestStore(fake, { relativeAccuracy: -Infinity }))).toBe(
      'redisLatencyDigestStore: relativeAccuracy must be in (0, 1), got -Infinity',
    );
    expect(
      messageOf(() => redisRateLimitStore(fake, { prefix: 'a{b}', commandTimeout: '-1s', keyTtl: 10 })),
    ).toBe(
      `redisRateLimitStore: commandTimeout must be ${duration}, got '-1s'; ` +
        "prefix must be a non-empty string without { or }, got 'a{b}'; keyTtl must be a finite duration ≥ 1s, got 10",
    );
    expect(messageOf(() => redisCircuitBreakerStore(fake, { localCacheTtl: Number.NaN }))).toMatch(
      /localCacheTtl must be a duration .*, got NaN/,
    );
    expect(
      messageOf(() =>
        redisControlStore(fake, { pubsub: 'fanout' as 'sharded', subscriber: () => newClient() }),
      ),
    ).toBe("redisControlStore: pubsub must be 'classic' or 'sharded', got 'fanout'");
  });

  it('defaults: prefix ballast, 250 ms timeout, server clock, local cache off', () => {
    expect(redisCircuitBreakerStore(fake).options).toEqual({
      prefix: 'ballast',
      commandTimeout: 250,
      time: 'server',
      keyTtl: 3_600_000,
      localCacheTtl: 0,
    });
    expect(redisRateLimitStore(fake, { commandTimeout: '1s' }).options.commandTimeout).toBe(1000);
  });
});

/**
 * What a store does with the server's own answers, on a redis-server of the test's own (its scripts flushed, made a
 * replica, paused): the shared Redis on 6379 is left alone.
 */
if (RUN_TOPOLOGY_TESTS) {
  describe('Redis stores against a server that flushed its scripts, is read-only or does not answer', () => {
    jest.setTimeout(30_000);
    let server: RedisServerProcess;
    let admin: Redis;
    let client: Redis;
    beforeAll(async () => {
      server = new RedisServerProcess(await freePort());
      await server.start();
      admin = newClient(server.url);
      client = newClient(server.url);
    });
    afterAll(async () => {
      admin.disconnect();
      client.disconnect();
      await server.destroy();
    });
    const key = stateKey('p', 'r');
    const rate = { permits: 5, per: 1000, burst: 5 };

    it('falls back to EVAL when the server answers NOSCRIPT (a restart or SCRIPT FLUSH forgot the script)', async () => {
      const store = redisRateLimitStore(client, { prefix: 'noscript' });
      expect(await store.take(key, rate, 0)).toEqual({ ok: true, tokens: 4 });
      await admin.script('FLUSH');
      await admin.config('RESETSTAT');
      expect(await store.take(key, rate, 0)).toMatchObject({ ok: true });
      const stats = String(await admin.info('commandstats'));
      // One EVALSHA refused with NOSCRIPT, then one EVAL, which loads the script again for the next EVALSHA.
      expect(stats).toMatch(/cmdstat_evalsha:calls=\d+,[^\n]*failed_calls=1/);
      expect(stats).toMatch(/cmdstat_eval:calls=1,/);
      expect(await store.take(key, rate, 0)).toMatchObject({ ok: true });
      expect(String(await admin.info('commandstats'))).toMatch(/cmdstat_eval:calls=1,/);
    });

    it('wraps a server error in RedisStoreError (a replica answers READONLY to a write script)', async () => {
      await admin.replicaof('127.0.0.1', '1'); // a replica of nobody: read-only at once
      try {
        const error = await redisRateLimitStore(client, { prefix: 'readonly' })
          .take(key, rate, 0)
          .catch((e: unknown) => e);
        expect(isRedisStoreError(error)).toBe(true);
        expect(error).toMatchObject({
          store: 'rateLimit',
          operation: 'take',
          timedOut: false,
          kind: 'infrastructure',
        });
        expect((error as RedisStoreError).code).toBe('resilience_store_unavailable');
        expect(String((error as RedisStoreError).cause)).toMatch(/READONLY/);
      } finally {
        await admin.replicaof('NO', 'ONE');
      }
    });

    it('never hangs: a server that does not answer fails the call within commandTimeout', async () => {
      const store = redisLatencyDigestStore(client, { commandTimeout: 50, prefix: 'silent' });
      // Paused longer than the test waits: an answer could only come after the store's own timer gave up.
      await admin.call('CLIENT', 'PAUSE', '10000', 'ALL');
      try {
        const error = await store
          .read(stateKey('p', 'r'), { quantile: 0.9, window: 100 }, 0)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RedisStoreError);
        expect(error).toMatchObject({ store: 'latencyDigest', timedOut: true });
      } finally {
        await admin.call('CLIENT', 'UNPAUSE');
      }
    });
  });
} else {
  describe('Redis stores against a server of the test’s own', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}

if (RUN_REDIS_TESTS) {
  describe('Redis stores on the server clock', () => {
    const prefix = uniquePrefix('stores');
    let redis: Redis;
    beforeAll(async () => {
      redis = newClient();
      await requireRedis(redis);
    });
    afterAll(() => cleanUp(prefix, [redis]));
    let n = 0;
    const key = () => stateKey(`server-${++n}`, 'orders-db');

    it('trips, rejects for breakDuration of server time, then grants one probe', async () => {
      const store = redisCircuitBreakerStore(redis, { prefix });
      const k = key();
      for (let i = 0; i < 4; i++) {
        const a = await store.acquire(k, breaker, 0);
        if (!a.admitted) throw new Error('rejected while closed');
        await store.record(k, breaker, a, 'failure', 0);
      }
      const rejected = await store.acquire(k, breaker, 0);
      expect(rejected.admitted).toBe(false);
      expect(!rejected.admitted && rejected.retryAfter > 0 && rejected.retryAfter <= 1000).toBe(true);
      // wait out what the server itself says is left of the break (its clock, not ours)
      await sleep((rejected.admitted ? 0 : rejected.retryAfter) + 30);
      const probe = await store.acquire(k, breaker, 0);
      expect(probe).toMatchObject({
        admitted: true,
        state: 'half_open',
        transition: { from: 'open', to: 'half_open' },
      });
      expect((await store.acquire(k, breaker, 0)).admitted).toBe(false);
      if (!probe.admitted) throw new Error('no probe');
      expect((await store.record(k, breaker, probe, 'success', 0)).state).toBe('closed');
    });

    it('refills tokens on the server clock and answers a retryAfter within one token time', async () => {
      const store = redisRateLimitStore(redis, { prefix });
      const k = key();
      const p = { permits: 20, per: 1000, burst: 2 };
      expect((await store.take(k, p, 0)).ok).toBe(true);
      // Real server time passes between round trips (a token every 50 ms): on a loaded machine a token may refill
      // before the bucket is seen empty, so take until the first denial (bounded) instead of assuming the third.
      let denied = await store.take(k, p, 0);
      for (let i = 0; denied.ok && i < 100; i++) denied = await store.take(k, p, 0);
      expect(!denied.ok && denied.retryAfter > 0 && denied.retryAfter <= 50).toBe(true);
      await sleep(60);
      expect((await store.take(k, p, 0)).ok).toBe(true);
    });

    it("estimates exactly what a sketches-js DDSketch of the epoch's samples answers", async () => {
      const store = redisLatencyDigestStore(redis, { prefix });
      const k = key();
      const p = { quantile: 0.95, window: 500 };
      const sketch = new DDSketch({ relativeAccuracy: 0.01 });
      let last: number | undefined;
      for (let i = 0; i < 500; i++) {
        const x = i % 7 === 0 ? 0 : 1 + ((i * 7919) % 1000) / 3;
        sketch.accept(x);
        last = await store.observe(k, p, x, 0);
      }
      expect(last).toBe(sketch.getValueAtQuantile(0.95));
      expect(await store.read(k, p, 0)).toBe(last);
    });

    it('lays keys out as <prefix>:{<id>}:… with a TTL on every key', async () => {
      const k = stateKey('layout', 'a b/{c}');
      const cb = redisCircuitBreakerStore(redis, { prefix });
      const rl = redisRateLimitStore(redis, { prefix });
      const dd = redisLatencyDigestStore(redis, { prefix });
      const a = await cb.acquire(k, breaker, 0);
      if (!a.admitted) throw new Error('rejected');
      await cb.record(k, breaker, a, 'success', 0);
      await rl.take(k, { permits: 1, per: 1000, burst: 1 }, 0);
      await dd.observe(k, { quantile: 0.5, window: 10 }, 12, 0);
      await dd.reset(k, 0);
      const base = `${prefix}:{layout|a%20b%2F%7Bc%7D}`;
      const keys = (await scanKeys(redis, `${prefix}:{layout*`)).sort();
      expect(keys).toEqual(
        [`${base}:cb`, `${base}:dd:0.5`, `${base}:dd:0.5:b`, `${base}:dd:r`, `${base}:rl`].sort(),
      );
      for (const name of keys) expect(await redis.pttl(name)).toBeGreaterThan(0);
    });

    it("takes a keyTtl that is not whole ms ('2.3h'): every operation works and every key keeps a TTL", async () => {
      const opts = { prefix, keyTtl: '2.3h' } as const;
      const k = stateKey('fractional-ttl', 'r');
      const cb = redisCircuitBreakerStore(redis, opts);
      const dd = redisLatencyDigestStore(redis, opts);
      expect(cb.options.keyTtl).toBe(8_280_000);
      const a = await cb.acquire(k, breaker, 0);
      if (!a.admitted) throw new Error('rejected');
      await cb.record(k, breaker, a, 'success', 0);
      await cb.reset(k, 0);
      await dd.observe(k, { quantile: 0.9, window: 10 }, 12, 0);
      await dd.reset(k, 0);
      const keys = await scanKeys(redis, `${prefix}:{fractional-ttl*`);
      expect(keys.length).toBeGreaterThanOrEqual(3);
      for (const name of keys) expect(await redis.pttl(name)).toBeGreaterThan(0);
    });

    it('takes durations longer than a Redis expiry can hold (Number.MAX_VALUE = "forever"): every write works', async () => {
      const forever = Number.MAX_VALUE;
      const k = stateKey('forever', 'r');
      const cb = redisCircuitBreakerStore(redis, { prefix });
      const p = { ...breaker, breakDuration: forever };
      for (let i = 0; i < p.minThroughput; i++) {
        const a = await cb.acquire(k, p, 0);
        if (!a.admitted) throw new Error('rejected while closed');
        await cb.record(k, p, a, 'failure', 0);
      }
      expect(await cb.acquire(k, p, 0)).toMatchObject({ admitted: false, state: 'open' });
      const rl = redisRateLimitStore(redis, { prefix });
      const once = { permits: 1, per: forever, burst: 1 };
      expect((await rl.take(k, once, 0)).ok).toBe(true);
      expect((await rl.take(k, once, 0)).ok).toBe(false);
      const dd = redisLatencyDigestStore(redis, { prefix, keyTtl: forever });
      await dd.observe(k, { quantile: 0.5, window: 10 }, 12, 0);
      await dd.reset(k, 0);
      const keys = await scanKeys(redis, `${prefix}:{forever*`);
      expect(keys.length).toBeGreaterThanOrEqual(5);
      for (const name of keys) expect(await redis.pttl(name)).toBeGreaterThan(0);
    });

    it('with localCacheTtl, serves a cached closed state until it expires (documented staleness)', async () => {
      const opts = { prefix, time: 'caller', localCacheTtl: 1000 } as const;
      const cached = redisCircuitBreakerStore(redis, opts);
      const other = redisCircuitBreakerStore(redis, { prefix, time: 'caller' });
      const k = key();
      const params = { ...breaker, breakDuration: 5000 };
      const first = await cached.acquire(k, params, 0);
      for (let i = 0; i < 4; i++) {
        const a = await other.acquire(k, params, 0);
        if (!a.admitted) throw new Error('rejected');
        await other.record(k, params, a, 'failure', 0);
      }
      const stale = cached.acquire(k, params, 500);
      expect(stale).not.toBeInstanceOf(Promise); // answered locally
      expect(stale).toBe(first);
      if (!first.admitted) throw new Error('rejected');
      expect(await cached.record(k, params, first, 'success', 500)).toEqual({
        state: 'open',
        transition: undefined,
      });
      expect((await cached.acquire(k, params, 600)).admitted).toBe(false);
    });
  });
} else {
  describe('Redis stores on the server clock', () => reportRedisUnreachable());
}
