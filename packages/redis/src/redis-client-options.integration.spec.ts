import { stateKey, type BreakerParams } from '@ballast/core';
import { Redis } from 'ioredis';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  deleteKeys,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  scanKeys,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { BREAKER_ACQUIRE, BREAKER_INSPECT, BREAKER_RECORD, BREAKER_RESET } from './lua/breaker-scripts';
import { DIGEST_OBSERVE, DIGEST_READ, DIGEST_RESET } from './lua/digest-scripts';
import { RATE_LIMIT, RATE_LIMIT_RESET } from './lua/rate-limit-scripts';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from './index';

const breaker: BreakerParams = {
  failureRatio: 0.5,
  samplingWindow: 10_000,
  minThroughput: 4,
  breakDuration: 60_000,
  halfOpenMaxCalls: 1,
};
const bucket = { permits: 1, per: 60_000, burst: 2 };

/** The ioredis options under test (a subset of `RedisOptions`). */
interface ClientOptions {
  stringNumbers?: boolean;
  keyPrefix?: string;
  db?: number;
  lazyConnect?: boolean;
  maxRetriesPerRequest?: number | null;
  enableAutoPipelining?: boolean;
}

if (RUN_REDIS_TESTS) {
  describe('Redis stores on ioredis clients as users configure them', () => {
    const prefix = uniquePrefix('client-options');
    let redis: Redis;
    const extra: Redis[] = [];
    /** A client with user options, disconnected (and its keys deleted) after the file. */
    const client = (options: ClientOptions): Redis => {
      const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 2000, ...options });
      c.on('error', () => {});
      extra.push(c);
      return c;
    };
    beforeAll(async () => {
      redis = newClient();
      await requireRedis(redis);
    });
    afterAll(async () => {
      for (const c of extra) {
        if (c.options.db === 1) await deleteKeys(c, prefix).catch(() => 0);
      }
      await cleanUp(prefix, [redis, ...extra]);
    });
    let n = 0;
    const key = () => stateKey(`options-${++n}`, 'orders');

    /** Trips a breaker through `store` and takes a bucket dry; answers what each store then says. */
    async function exercise(c: Redis) {
      const k = key();
      const cb = redisCircuitBreakerStore(c, { prefix });
      const rl = redisRateLimitStore(c, { prefix });
      const admissions: boolean[] = [];
      for (let i = 0; i < breaker.minThroughput; i++) {
        const a = await cb.acquire(k, breaker, 0);
        admissions.push(a.admitted);
        if (a.admitted) await cb.record(k, breaker, a, 'failure', 0);
      }
      const takes = [];
      for (let i = 0; i < 3; i++) takes.push((await rl.take(k, bucket, 0)).ok);
      return { k, admissions, after: await cb.acquire(k, breaker, 0), takes };
    }

    it('admit and take on a client with stringNumbers: true (integer replies arrive as strings)', async () => {
      const { admissions, after, takes } = await exercise(client({ stringNumbers: true }));
      // a closed breaker admits every call until it trips, then rejects
      expect(admissions).toEqual([true, true, true, true]);
      expect(after).toMatchObject({ admitted: false, state: 'open' });
      // a bucket of burst 2 grants two takes, then denies
      expect(takes).toEqual([true, true, false]);
    });

    it('keep to the keys they name on a client with keyPrefix (prefixed once, shared with unprefixed clients)', async () => {
      const { k, after, takes } = await exercise(client({ keyPrefix: 'app1:' }));
      expect(after).toMatchObject({ admitted: false, state: 'open' });
      expect(takes).toEqual([true, true, false]);
      const keys = (await scanKeys(redis, `app1:${prefix}:{${k.id}}*`)).sort();
      expect(keys).toEqual([`app1:${prefix}:{${k.id}}:cb`, `app1:${prefix}:{${k.id}}:rl`]);
      // the same state, read by a client without keyPrefix through the store prefix that spells it out
      const plain = redisCircuitBreakerStore(redis, { prefix: `app1:${prefix}` });
      expect(await plain.acquire(k, breaker, 0)).toMatchObject({ admitted: false, state: 'open' });
      await redis.del(...keys);
    });

    it('keep their state in the selected database on a client connected to db 1', async () => {
      const db1 = client({ db: 1 });
      const { k, after } = await exercise(db1);
      expect(after).toMatchObject({ admitted: false, state: 'open' });
      expect(await scanKeys(db1, `${prefix}:{${k.id}}*`)).toHaveLength(2);
      expect(await scanKeys(redis, `${prefix}:{${k.id}}*`)).toEqual([]);
    });

    it('work on lazyConnect and on maxRetriesPerRequest: null clients', async () => {
      for (const options of [{ lazyConnect: true }, { maxRetriesPerRequest: null }]) {
        const { after, takes } = await exercise(client(options));
        expect(after).toMatchObject({ admitted: false, state: 'open' });
        expect(takes).toEqual([true, true, false]);
      }
    });

    it('reload every script after SCRIPT FLUSH, under concurrency, with no failed call', async () => {
      const c = client({ enableAutoPipelining: true });
      const opts = { prefix, commandTimeout: 5000 };
      const cb = redisCircuitBreakerStore(c, opts);
      const rl = redisRateLimitStore(c, opts);
      const dd = redisLatencyDigestStore(c, opts);
      const digest = { quantile: 0.5, window: 10 };
      const big = { permits: 1000, per: 1000, burst: 1000 };
      const failures: unknown[] = [];
      for (let round = 0; round < 3; round++) {
        await redis.script('FLUSH');
        const ops: Array<Promise<unknown>> = [];
        for (let i = 0; i < 40; i++) {
          const k = stateKey(`flush-${i % 5}`, 'r');
          ops.push(
            Promise.resolve(cb.acquire(k, breaker, 0)),
            cb.record(k, breaker, { generation: 0, lease: undefined }, 'success', 0),
            cb.inspect(k, breaker, 0),
            rl.take(k, big, 0),
            rl.tokens(k, big, 0),
            dd.observe(k, digest, 5, 0),
            dd.read(k, digest, 0),
          );
          if (i % 20 === 0) ops.push(cb.reset(k, 0), rl.reset(k), dd.reset(k, 0), redis.script('FLUSH'));
        }
        for (const r of await Promise.allSettled(ops)) if (r.status === 'rejected') failures.push(r.reason);
      }
      expect(failures).toEqual([]);
      // and each script is cached on the server again (EVAL loaded it), so the next calls run by EVALSHA alone
      const scripts = [
        BREAKER_ACQUIRE,
        BREAKER_RECORD,
        BREAKER_INSPECT,
        BREAKER_RESET,
        RATE_LIMIT,
        RATE_LIMIT_RESET,
      ];
      const all = [...scripts, DIGEST_OBSERVE, DIGEST_READ, DIGEST_RESET].map((s) => s.sha);
      expect((await redis.script('EXISTS', ...all)) as number[]).toEqual(all.map(() => 1));
    });
  });
} else {
  describe('Redis stores on ioredis clients as users configure them', () => reportRedisUnreachable());
}
