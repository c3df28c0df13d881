import { seededRandom } from '@ballast/testing';
import { stateKey, type BreakerParams, type StateKey } from '@ballast/core';
import type { Redis } from 'ioredis';
import {
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  scanKeys,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from './index';

const breaker: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 2000,
  minThroughput: 2,
  breakDuration: 200,
  halfOpenMaxCalls: 2,
};

/** Names users really give policies and routes: separators, braces, spaces, unicode, escapes, a very long one. */
const NAMES = ['a', 'a:b', 'a|b', '{x}', '}{', 'sp ace', 'ünï 😀', '%7B', 'b', 'L'.repeat(4000)];

if (RUN_REDIS_TESTS) {
  describe('Redis key hygiene', () => {
    const prefix = uniquePrefix('hygiene');
    let redis: Redis;
    beforeAll(async () => {
      redis = newClient();
      await requireRedis(redis);
    });
    afterAll(() => cleanUp(prefix, [redis]));

    it('keeps apart replicas whose relativeAccuracy differs: each reads its own sketch, not the other’s buckets', async () => {
      const fine = redisLatencyDigestStore(redis, { prefix });
      const coarse = redisLatencyDigestStore(redis, { prefix, relativeAccuracy: 0.05 });
      const k = stateKey('mid-deploy-accuracy', 'r');
      const p = { quantile: 0.5, window: 5 };
      // mid-deploy: the fleet's calls alternate between a replica on the old accuracy and one on the new
      for (let i = 0; i < 10; i++) await (i % 2 === 0 ? fine : coarse).observe(k, p, 100, 0);
      // each estimate is the 100 ms every call took, within that store's accuracy (mixed up: 2.5 ms)
      expect(Math.abs((await fine.read(k, p, 0))! - 100)).toBeLessThanOrEqual(100 * 0.01);
      expect(Math.abs((await coarse.read(k, p, 0))! - 100)).toBeLessThanOrEqual(100 * 0.05);
      // one reset (AIMD decrease) still opens a fresh epoch for both
      await fine.reset(k, 0);
      expect(await coarse.read(k, p, 0)).toBeUndefined();
    });

    it('never lets two (policy, route) pairs share state, whatever their names contain', async () => {
      const cb = redisCircuitBreakerStore(redis, { prefix });
      const rl = redisRateLimitStore(redis, { prefix });
      const pairs: StateKey[] = [];
      for (const policy of NAMES) {
        pairs.push(stateKey(`collide-${policy}`, undefined));
        for (const route of NAMES) pairs.push(stateKey(`collide-${policy}`, route));
      }
      // 'collide-a|b' (no route) and ('collide-a', 'b') are the classic pair an unescaped separator merges
      expect(new Set(pairs.map((k) => k.id)).size).toBe(pairs.length);
      // A break far longer than the checks below take on server time, however loaded the machine: only a
      // shared key could let another pair see it open.
      const long = { ...breaker, breakDuration: 600_000 };
      const tripped = stateKey('collide-a|b', undefined);
      for (let i = 0; i < long.minThroughput; i++) {
        const a = await cb.acquire(tripped, long, 0);
        if (a.admitted) await cb.record(tripped, long, a, 'failure', 0);
      }
      const drained = { permits: 1, per: 3_600_000, burst: 1 };
      expect((await rl.take(tripped, drained, 0)).ok).toBe(true);
      const others = pairs.filter((k) => k.id !== tripped.id);
      for (const k of others) {
        expect(await cb.acquire(k, long, 0)).toMatchObject({ admitted: true, state: 'closed' });
        expect(await rl.tokens(k, drained, 0)).toBe(1);
      }
      expect(await cb.acquire(tripped, long, 0)).toMatchObject({ admitted: false, state: 'open' });
    });

    it('leaves no key without an expiry after a random run of every operation on awkward names', async () => {
      const random = seededRandom(11);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const opts = { prefix: `${prefix}-run`, keyTtl: '1h' } as const;
      const cb = redisCircuitBreakerStore(redis, opts);
      const rl = redisRateLimitStore(redis, opts);
      const dd = redisLatencyDigestStore(redis, opts);
      const dd2 = redisLatencyDigestStore(redis, { ...opts, relativeAccuracy: 0.02 });
      try {
        for (let i = 0; i < 1500; i++) {
          const k = stateKey(pick(NAMES), random() < 0.3 ? undefined : pick(NAMES));
          const p = { ...breaker, samplingWindow: random() < 0.1 ? 4000 : 2000 };
          const r = random();
          if (r < 0.35) {
            const a = await cb.acquire(k, p, 0);
            if (a.admitted) await cb.record(k, p, a, pick(['failure', 'failure', 'success', 'release']), 0);
          } else if (r < 0.37) await cb.reset(k, 0);
          else if (r < 0.39) await cb.inspect(k, p, 0);
          else if (r < 0.55)
            await rl.take(k, { permits: pick([1, 2, 3]), per: 100, burst: 2 }, 0, pick([1, 1, 5]));
          else if (r < 0.6) await rl.tokens(k, { permits: 2, per: 100, burst: 2 }, 0);
          else if (r < 0.61) await rl.reset(k);
          else if (r < 0.93) {
            await pick([dd, dd2]).observe(k, { quantile: pick([0.5, 0.99]), window: 5 }, random() * 100, 0);
          } else if (r < 0.96) await dd.reset(k, 0);
          else await dd.read(k, { quantile: 0.5, window: 5 }, 0);
          // real server time passes now and then: breaks end, windows roll, buckets refill
          if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 120));
        }
        const keys = await scanKeys(redis, `${prefix}-run:*`);
        expect(keys.length).toBeGreaterThan(100);
        const persistent: string[] = [];
        for (const name of keys) if ((await redis.pttl(name)) === -1) persistent.push(name.slice(0, 120));
        expect(persistent).toEqual([]);
      } finally {
        const keys = await scanKeys(redis, `${prefix}-run:*`);
        if (keys.length > 0) await redis.del(...keys);
      }
    });
  });
} else {
  describe('Redis key hygiene', () => reportRedisUnreachable());
}
