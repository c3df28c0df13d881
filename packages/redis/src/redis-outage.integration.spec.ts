import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  isResilienceError,
  stateKey,
  type BreakerParams,
  type ResilienceEvent,
} from '@ballast/core';
import type { Redis } from 'ioredis';
import { TcpProxy } from './__tests__/tcp-proxy';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  uniquePrefix,
} from './__tests__/redis-test-env';
import {
  RedisStoreError,
  redisCircuitBreakerStore,
  redisLatencyDigestStore,
  redisRateLimitStore,
} from './index';

const params: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 60_000,
  minThroughput: 4,
  breakDuration: 60_000,
  halfOpenMaxCalls: 1,
};
const TIMEOUT = 150;
/**
 * The command timeout of the stores that set up and check state on the direct connection (not under test): generous,
 * so a loaded CI machine cannot fail the setup with the default 250 ms (seen once at load average 7–11).
 */
const SETUP_TIMEOUT = 10_000;

/** Awaits `p` and answers what it threw, with how long that took. */
/**
 * Awaits the failure of the operation `start` begins, timing it from a fresh turn of the event loop. Node's timers
 * count from the loop's cached time, which lags the real time by however long the current turn has run: started
 * late in a busy turn, a 150 ms command timeout fired 143 ms after a stopwatch read just before it.
 */
async function failure(start: () => unknown): Promise<{ error: unknown; ms: number }> {
  await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  try {
    await start();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('expected a failure');
}

/** Polls `fn` until it resolves (a reconnecting client may fail a few times first). */
async function eventually<T>(fn: () => Promise<T>, within = 10_000): Promise<T> {
  const until = Date.now() + within;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

if (RUN_REDIS_TESTS) {
  describe('Redis outages', () => {
    jest.setTimeout(30_000);
    const prefix = uniquePrefix('outage');
    const target = new URL(REDIS_URL);
    let proxy: TcpProxy;
    let client: Redis; // through the proxy
    let direct: Redis; // straight to Redis: the rest of the fleet
    beforeAll(async () => {
      proxy = await TcpProxy.start(target.hostname, Number(target.port || 6379));
      client = newClient(proxy.url);
      direct = newClient();
      await requireRedis(direct);
      await client.ping();
    });
    afterEach(() => proxy.restore());
    afterAll(async () => {
      try {
        await cleanUp(prefix, [direct, client]);
      } finally {
        await proxy?.close();
      }
    });
    let n = 0;
    const key = () => stateKey(`outage-${++n}`, 'inventory');

    it('throws the typed error within commandTimeout when Redis stops answering, and recovers with nothing lost', async () => {
      const store = redisCircuitBreakerStore(client, { prefix, commandTimeout: TIMEOUT });
      const fleet = redisCircuitBreakerStore(direct, { prefix, commandTimeout: SETUP_TIMEOUT });
      const k = key();
      for (let i = 0; i < 4; i++) {
        const a = await fleet.acquire(k, params, 0);
        if (a.admitted) await fleet.record(k, params, a, 'failure', 0);
      }
      proxy.stall();
      const stalled = await failure(() => store.acquire(k, params, 0));
      expect(stalled.error).toBeInstanceOf(RedisStoreError);
      expect(stalled.error).toMatchObject({ store: 'circuitBreaker', operation: 'acquire', timedOut: true });
      // it waited for the command timeout (never gave up early); that it did not wait forever is the
      // `timedOut` flag above and the test's own timeout — no upper bound on a loaded CI machine's timers
      expect(stalled.ms).toBeGreaterThanOrEqual(TIMEOUT - 5);
      const rl = redisRateLimitStore(client, { prefix, commandTimeout: TIMEOUT });
      const dd = redisLatencyDigestStore(client, { prefix, commandTimeout: TIMEOUT });
      expect((await failure(() => rl.take(k, { permits: 1, per: 1000, burst: 1 }, 0))).error).toBeInstanceOf(
        RedisStoreError,
      );
      expect((await failure(() => dd.observe(k, { quantile: 0.5, window: 10 }, 5, 0))).error).toBeInstanceOf(
        RedisStoreError,
      );
      proxy.restore();
      // the breaker tripped before the outage is still open: Redis kept the state
      expect(await eventually(async () => store.acquire(k, params, 0))).toMatchObject({
        admitted: false,
        state: 'open',
      });
    });

    it('waits out a slow reply under a commandTimeout longer than a Node timer holds (600h), not 1 ms', async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.name);
      process.on('warning', onWarning);
      try {
        const store = redisRateLimitStore(client, { prefix, commandTimeout: '600h' });
        const k = key();
        proxy.stall(); // Redis answers 50 ms late
        const outcome = store.take(k, { permits: 1, per: 1000, burst: 1 }, 0).catch((e: unknown) => e);
        await new Promise((resolve) => setTimeout(resolve, 50));
        proxy.restore();
        expect(await outcome).toEqual({ ok: true, tokens: 0 });
        expect(warnings).not.toContain('TimeoutOverflowWarning');
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('fails within commandTimeout while the connection is cut and recovers on reconnect without a restart', async () => {
      const store = redisRateLimitStore(client, { prefix, commandTimeout: TIMEOUT });
      const k = key();
      const p = { permits: 1, per: 3_600_000, burst: 10 };
      expect((await store.take(k, p, 0)).ok).toBe(true);
      proxy.cut();
      for (let i = 0; i < 3; i++) {
        const cut = await failure(() => store.take(k, p, 0));
        expect(cut.error).toBeInstanceOf(RedisStoreError); // failed while cut, not served after the reconnect
      }
      proxy.restore();
      let polls = 0;
      const after = await eventually(() => {
        polls++;
        return store.take(k, p, 0);
      });
      expect(after.ok).toBe(true);
      // ioredis's offline queue may still deliver timed-out takes after the reconnect (documented): the bucket
      // never gains, and loses at most one token per call that timed out
      expect(after.tokens).toBeGreaterThanOrEqual(10 - 2 - 3 - (polls - 1) - 1e-9);
      expect(after.tokens).toBeLessThanOrEqual(10 - 2 + 1e-9);
    });

    it('with enableOfflineQueue: false, a cut fails at once and nothing runs late', async () => {
      const strict = newClient(proxy.url, { enableOfflineQueue: false, lazyConnect: true });
      try {
        await strict.connect();
        const store = redisRateLimitStore(strict, { prefix, commandTimeout: TIMEOUT });
        const k = key();
        const p = { permits: 1, per: 3_600_000, burst: 10 };
        expect((await store.take(k, p, 0)).ok).toBe(true);
        proxy.cut();
        await eventually(async () => {
          if (strict.status === 'ready') throw new Error('not noticed yet');
        });
        for (let i = 0; i < 3; i++) {
          const cut = await failure(() => store.take(k, p, 0));
          // failed by the client at once, not by the timeout
          expect(cut.error).toMatchObject({ store: 'rateLimit', timedOut: false });
        }
        proxy.restore();
        const after = await eventually(() => store.take(k, p, 0));
        expect(after.tokens).toBeCloseTo(8, 2); // refill of 1 token per hour is negligible
      } finally {
        strict.disconnect();
      }
    });

    it('recovers after the server kills the connection (CLIENT KILL)', async () => {
      const own = newClient();
      try {
        const id = await own.client('ID');
        const store = redisCircuitBreakerStore(own, { prefix, commandTimeout: TIMEOUT });
        const k = key();
        await store.acquire(k, params, 0);
        expect(await direct.client('KILL', 'ID', String(id))).toBe(1);
        expect(await eventually(async () => store.acquire(k, params, 0))).toMatchObject({
          admitted: true,
          state: 'closed',
        });
      } finally {
        own.disconnect();
      }
    });

    describe('through the executor (failOpenOnStoreError)', () => {
      const breaker = new CircuitBreakerStrategy({
        failureRatio: 0.5,
        samplingWindow: '1m',
        minThroughput: 4,
        breakDuration: '1m',
      });
      const limit = new RateLimitStrategy({ permits: 100, per: '1s' });
      const build = (failOpen: boolean) => {
        const events: ResilienceEvent[] = [];
        const resilience = new Resilience({
          policies: [
            new ResiliencePolicy({
              name: 'orders',
              strategies: [limit, breaker],
              failOpenOnStoreError: failOpen,
            }),
          ],
          stores: {
            circuitBreaker: redisCircuitBreakerStore(client, { prefix, commandTimeout: TIMEOUT }),
            rateLimit: redisRateLimitStore(client, { prefix, commandTimeout: TIMEOUT }),
          },
        });
        resilience.on((e) => events.push(e));
        return { resilience, events };
      };

      it('fails open: the call runs on local state and store_degraded is emitted', async () => {
        const { resilience, events } = build(true);
        const route = `open-${++n}`;
        expect(await resilience.run(async () => 'ok', { policy: 'orders', route })).toBe('ok');
        proxy.stall();
        expect(await resilience.run(async () => 'still ok', { policy: 'orders', route })).toBe('still ok');
        const degraded = events.filter((e) => e.type === 'store_degraded');
        expect(degraded.length).toBeGreaterThanOrEqual(1);
        expect(degraded[0]).toMatchObject({ policy: 'orders', route });
        expect(degraded.every((e) => e.type === 'store_degraded' && e.error instanceof RedisStoreError)).toBe(
          true,
        );
      });

      it('fails open without swallowing failures: the local breaker trips during the outage, Redis governs once back (litellm PR #34300, next-shared-cache #771)', async () => {
        // litellm PR #34300: store errors swallowed, so the breaker could never trip; next-shared-cache #771: dead
        // after a reconnect.
        const { resilience, events } = build(true);
        const route = `trip-${++n}`;
        const degraded = () => events.filter((e) => e.type === 'store_degraded').length;
        const down = () =>
          Promise.reject(Object.assign(new Error('dependency down'), { code: 'ECONNRESET' }));
        proxy.stall();
        for (let i = 0; i < 4; i++) await resilience.run(down, { policy: 'orders', route }).catch(() => 0);
        let ran = false;
        const refused = await resilience
          .run(async () => (ran = true), { policy: 'orders', route })
          .catch((e: unknown) => e);
        expect(ran).toBe(false);
        expect(isResilienceError(refused) && refused.code).toBe('circuit_open');
        expect(degraded()).toBeGreaterThanOrEqual(5);
        expect(
          events.filter((e) => e.type === 'breaker_state').map((e) => e.type === 'breaker_state' && e.to),
        ).toEqual(['open']);
        proxy.restore();
        // back to normal: Redis (which never saw the outage's failures) answers again, with no store_degraded
        expect(
          await eventually(async () => {
            const before = degraded();
            const value = await resilience.run(async () => 'served by the fleet state', {
              policy: 'orders',
              route,
            });
            if (degraded() !== before) throw new Error('still reconnecting');
            return value;
          }),
        ).toBe('served by the fleet state');
        // and a trip anywhere in the fleet reaches this instance again
        const fleet = redisCircuitBreakerStore(direct, { prefix, commandTimeout: SETUP_TIMEOUT });
        const k = stateKey('orders', route);
        for (let i = 0; i < 4; i++) {
          const a = await fleet.acquire(k, params, 0);
          if (a.admitted) await fleet.record(k, params, a, 'failure', 0);
        }
        const again = await resilience
          .run(async () => 'ran', { policy: 'orders', route })
          .catch((e: unknown) => e);
        expect(isResilienceError(again) && again.code).toBe('circuit_open');
      });

      it('fails closed: the call is refused with resilience_store_unavailable', async () => {
        const { resilience } = build(false);
        const route = `closed-${++n}`;
        proxy.stall();
        let ran = false;
        const error = await resilience
          .run(
            async () => {
              ran = true;
            },
            { policy: 'orders', route },
          )
          .catch((e: unknown) => e);
        expect(ran).toBe(false);
        expect(isResilienceError(error) && error.code).toBe('resilience_store_unavailable');
        proxy.restore();
        // back to normal: the fleet's state in Redis governs again
        const fleet = redisCircuitBreakerStore(direct, { prefix, commandTimeout: SETUP_TIMEOUT });
        const k = stateKey('orders', route);
        for (let i = 0; i < 4; i++) {
          const a = await fleet.acquire(k, params, 0);
          if (a.admitted) await fleet.record(k, params, a, 'failure', 0);
        }
        const rejected = await eventually(async () => {
          const e = await resilience
            .run(async () => 'ran', { policy: 'orders', route })
            .catch((x: unknown) => x);
          if (isResilienceError(e) && e.code === 'resilience_store_unavailable') throw e; // still reconnecting
          return e;
        });
        expect(isResilienceError(rejected) && rejected.code).toBe('circuit_open');
      });
    });
  });
} else {
  describe('Redis outages', () => reportRedisUnreachable());
}
