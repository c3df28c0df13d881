import {
  CircuitBreakerStrategy,
  RateLimitStrategy,
  Resilience,
  ResiliencePolicy,
  isResilienceError,
  stateKey,
  type BreakerAdmission,
  type BreakerParams,
  type ResilienceEvent,
  type StateKey,
} from '@ballast/core';
import type { Redis } from 'ioredis';
import { Replica } from './__tests__/fleet-replica';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { redisCircuitBreakerStore, redisLatencyDigestStore, redisRateLimitStore } from './index';

/** Milliseconds on the Redis server clock (the fleet's only clock). */
async function serverNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

const params = (over: Partial<BreakerParams> = {}): BreakerParams => ({
  failureRatio: 0.5,
  samplingWindow: 60_000,
  minThroughput: 4,
  breakDuration: 60_000,
  halfOpenMaxCalls: 1,
  ...over,
});

async function trip(store: ReturnType<typeof redisCircuitBreakerStore>, key: StateKey, p: BreakerParams) {
  for (let i = 0; i < p.minThroughput; i++) {
    const a = await store.acquire(key, p, 0);
    if (!a.admitted) throw new Error('rejected before the trip');
    await store.record(key, p, a, 'failure', 0);
  }
}

if (RUN_REDIS_TESTS) {
  describe('a fleet sharing Redis', () => {
    jest.setTimeout(60_000);
    const prefix = uniquePrefix('fleet');
    // Atomicity, not latency, is under test: a generous timeout keeps a loaded CI machine from failing a stampede.
    const opts = { prefix, commandTimeout: 10_000 };
    let n = 0;
    const key = (): StateKey => stateKey(`fleet-${++n}`, 'payments');
    let admin: Redis;
    let clients: Redis[] = [];
    beforeAll(async () => {
      admin = newClient();
      clients = [newClient(), newClient(), newClient(), newClient()];
      await requireRedis(admin);
    });
    afterAll(() => cleanUp(prefix, [admin, ...clients]));

    describe('replicas whose configs differ (mid-deploy, or one replica retuned)', () => {
      const caller = { ...opts, time: 'caller' } as const;

      it('still trip the shared breaker: each samplingWindow re-buckets the window instead of wiping it', async () => {
        const [a, b] = [
          redisCircuitBreakerStore(clients[0]!, caller),
          redisCircuitBreakerStore(clients[1]!, caller),
        ];
        const k = key();
        const pa = params({ samplingWindow: 10_000, minThroughput: 10 });
        const pb = params({ samplingWindow: 20_000, minThroughput: 10 });
        let state = 'closed';
        for (let i = 0; i < 10; i++) {
          const [store, p] = i % 2 === 0 ? [a, pa] : [b, pb];
          const now = 1_000_000 + i * 100;
          const adm = await store.acquire(k, p, now);
          if (!adm.admitted) throw new Error('rejected while closed');
          state = (await store.record(k, p, adm, 'failure', now)).state;
        }
        expect(state).toBe('open');
      });

      it('keep the outcomes that still fall inside the other window, with their times', async () => {
        const store = redisCircuitBreakerStore(clients[0]!, caller);
        const k = key();
        const p = params({ samplingWindow: 10_000, minThroughput: 100 });
        for (const now of [1_000_000, 1_005_000]) {
          const adm = await store.acquire(k, p, now);
          if (!adm.admitted) throw new Error('rejected while closed');
          await store.record(k, p, adm, 'success', now);
        }
        // at 1_008_000 a 5 s window holds only the outcome of 1_005_000, a 20 s one both
        expect(await store.inspect(k, { ...p, samplingWindow: 5_000 }, 1_008_000)).toMatchObject({
          calls: 1,
        });
        expect(await store.inspect(k, { ...p, samplingWindow: 20_000 }, 1_008_000)).toMatchObject({
          calls: 2,
        });
      });

      it('still warm the shared latency digest when their windows differ', async () => {
        const [a, b] = [
          redisLatencyDigestStore(clients[0]!, caller),
          redisLatencyDigestStore(clients[1]!, caller),
        ];
        const k = key();
        let estimate: number | undefined;
        for (let i = 0; i < 400; i++) {
          const store = i % 2 === 0 ? a : b;
          estimate = await store.observe(
            k,
            { quantile: 0.5, window: i % 2 === 0 ? 100 : 200 },
            10 + (i % 10),
            0,
          );
        }
        expect(estimate).toBeGreaterThan(9);
        expect(estimate).toBeLessThan(20);
        expect(await b.read(k, { quantile: 0.5, window: 200 }, 0)).toBe(estimate);
      });
    });

    describe('several clients in one process', () => {
      const breakers = () => clients.map((c) => redisCircuitBreakerStore(c, opts));

      it('a trip through one client rejects on all', async () => {
        const [a, ...rest] = breakers();
        const k = key();
        await trip(a!, k, params());
        for (const s of rest)
          expect(await s.acquire(k, params(), 0)).toMatchObject({ admitted: false, state: 'open' });
      });

      it('grants exactly halfOpenMaxCalls probes to a stampede spread over four clients', async () => {
        const stores = breakers();
        const k = key();
        // Open for 200 ms; the stampede's own params give probe leases a long life, so a slow machine cannot let
        // one expire (and be re-granted, correctly) during the stampede.
        await trip(stores[0]!, k, params({ breakDuration: 200 }));
        await new Promise((r) => setTimeout(r, 220));
        const p = params({ breakDuration: 60_000, halfOpenMaxCalls: 2 });
        const results: BreakerAdmission[] = (
          await Promise.all(
            stores.map((s) =>
              Promise.all(Array.from({ length: 300 }, async () => ({ ...(await s.acquire(k, p, 0)) }))),
            ),
          )
        ).flat();
        expect(results.filter((r) => r.admitted)).toHaveLength(2);
        expect(results.filter((r) => r.transition !== undefined)).toHaveLength(1);
      });

      it('loses no update under concurrent records, takes and observations', async () => {
        const k = key();
        const p = params({ minThroughput: 1_000_000 });
        const stores = breakers();
        await Promise.all(
          stores.map((s) =>
            Promise.all(
              Array.from({ length: 250 }, async (_, i) => {
                const a = await s.acquire(k, p, 0);
                if (a.admitted) await s.record(k, p, a, i % 5 === 0 ? 'failure' : 'success', 0);
              }),
            ),
          ),
        );
        expect(await stores[0]!.inspect(k, p, 0)).toMatchObject({
          state: 'closed',
          calls: 1000,
          failureRatio: 0.2,
        });

        const buckets = clients.map((c) => redisRateLimitStore(c, opts));
        const rl = { permits: 1, per: 3_600_000, burst: 300 };
        const taken = await Promise.all(
          buckets.flatMap((s) => Array.from({ length: 250 }, async () => (await s.take(k, rl, 0)).ok)),
        );
        expect(taken.filter(Boolean)).toHaveLength(300);

        const digests = clients.map((c) => redisLatencyDigestStore(c, opts));
        const dp = { quantile: 0.5, window: 1000 };
        await Promise.all(
          digests.flatMap((s, j) =>
            Array.from({ length: 250 }, (_, i) => s.observe(k, dp, 1 + j * 250 + i, 0)),
          ),
        );
        const median = await digests[0]!.read(k, dp, 0);
        expect(Math.abs(median! - 500) / 500).toBeLessThan(0.02);
        expect(await admin.hget(`${prefix}:{${k.id}}:dd:0.5`, 'n')).toBe('0');
      });
    });

    describe('two Resilience instances on one Redis, a concurrent flood (@nestjs/throttler #1303: a Redis limit of 5 let ~400 of 1,000 requests through)', () => {
      // @nestjs/throttler #1303 let ~400 of 1,000 requests through a limit of 5 on Redis; nestjs-resilience reads,
      // mutates and writes its breaker. Here the whole executor runs on two clients: nothing may be decided locally.
      /**
       * Breaker transitions seen by any instance, in the order they happened: whichever instance tripped the breaker,
       * and whichever probed, the fleet must see each transition once (flattening per instance reordered them).
       */
      let fleetTransitions: string[] = [];
      const instances = () => {
        fleetTransitions = [];
        return [clients[0]!, clients[1]!].map((client) => {
          const events: ResilienceEvent[] = [];
          const resilience = new Resilience({
            policies: [
              new ResiliencePolicy({
                name: 'limited',
                strategies: [new RateLimitStrategy({ permits: 25, per: '1h' })],
              }),
              new ResiliencePolicy({
                name: 'guarded',
                strategies: [
                  new CircuitBreakerStrategy({
                    failureRatio: 0.5,
                    samplingWindow: '1m',
                    minThroughput: 10,
                    breakDuration: '1s',
                    halfOpenMaxCalls: 1,
                  }),
                ],
              }),
            ],
            stores: {
              circuitBreaker: redisCircuitBreakerStore(client, opts),
              rateLimit: redisRateLimitStore(client, opts),
            },
          });
          resilience.on((e) => {
            events.push(e);
            if (e.type === 'breaker_state') fleetTransitions.push(`${e.from}→${e.to}`);
          });
          return { resilience, events };
        });
      };
      const codeOf = (e: unknown) => (isResilienceError(e) ? e.code : e);
      const flood = <T>(
        fleet: ReturnType<typeof instances>,
        each: number,
        call: (r: Resilience) => Promise<T>,
      ): Promise<unknown[]> =>
        Promise.all(
          fleet.flatMap(({ resilience }) =>
            Array.from({ length: each }, () => call(resilience).catch((e: unknown) => codeOf(e))),
          ),
        );

      it('the global rate limit holds exactly', async () => {
        const fleet = instances();
        const route = `flood-${++n}`;
        try {
          const results = await flood(fleet, 500, (r) =>
            r.run(async () => 'admitted', { policy: 'limited', route }),
          );
          expect(results.filter((x) => x === 'admitted')).toHaveLength(25);
          expect(results.filter((x) => x === 'rate_limited')).toHaveLength(975);
        } finally {
          fleet.forEach((f) => f.resilience.dispose());
        }
      });

      it('the breaker opens once, and after the break only one node probes, once', async () => {
        const fleet = instances();
        const route = `breaker-${++n}`;
        const transitions = () => fleetTransitions;
        try {
          await flood(fleet, 50, (r) =>
            r.run(() => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' })), {
              policy: 'guarded',
              route,
            }),
          );
          // a call settles before its outcome reaches Redis: wait for the records (a second trip would show here)
          for (let i = 0; i < 300 && transitions().length === 0; i++)
            await new Promise((r) => setTimeout(r, 10));
          await new Promise((r) => setTimeout(r, 200));
          expect(transitions()).toEqual(['closed→open']);
          await new Promise((r) => setTimeout(r, 1100)); // the break is 1 s of Redis server time
          const refused = () =>
            fleet.reduce(
              (sum, f) =>
                sum + f.events.filter((e) => e.type === 'rejected' && e.code === 'circuit_open').length,
              0,
            );
          const before = refused();
          let probes = 0;
          let release!: () => void;
          const gate = new Promise<void>((r) => (release = r));
          const stampede = flood(fleet, 200, (r) =>
            r.run(async () => (probes++, await gate, 'probe'), { policy: 'guarded', route }),
          );
          // hold the probe until every other call of the stampede has been answered (bounded wait)
          for (let i = 0; i < 500 && refused() - before < 399; i++)
            await new Promise((r) => setTimeout(r, 10));
          release();
          const results = await stampede;
          expect(probes).toBe(1);
          expect(results.filter((x) => x === 'probe')).toHaveLength(1);
          expect(results.filter((x) => x === 'circuit_open')).toHaveLength(399);
          for (let i = 0; i < 300 && transitions().length < 3; i++)
            await new Promise((r) => setTimeout(r, 10));
          await new Promise((r) => setTimeout(r, 200));
          expect(transitions()).toEqual(['closed→open', 'open→half_open', 'half_open→closed']);
        } finally {
          fleet.forEach((f) => f.resilience.dispose());
        }
      });
    });

    // One replica per client family, so the fleet's processes share keys and scripts across clients as a fleet
    // mid-migration from one client to the other would: ioredis, node-redis 5 and node-redis 6.
    describe('separate Node processes (one on ioredis, one on node-redis 5, one on node-redis 6)', () => {
      const replicas: Replica[] = [];
      const on = (client: string) => ({ url: JSON.stringify({ url: REDIS_URL, client }) });
      beforeAll(async () => {
        // The first replica warms the transpile cache; the others then start in about a second.
        replicas.push(new Replica(opts, on('ioredis')));
        await replicas[0]!.ready;
        replicas.push(new Replica(opts, on('node-redis')), new Replica(opts, on('node-redis6')));
        await Promise.all(replicas.map((r) => r.ready));
        expect(replicas.map((r) => r.readyInfo['client'])).toEqual([
          'ioredis',
          expect.stringMatching(/^node-redis 5\./),
          expect.stringMatching(/^node-redis 6\./),
        ]);
      }, 120_000);
      afterAll(async () => {
        await Promise.all(replicas.map((r) => r.stop()));
      });
      const wire = (k: StateKey) => ({ policy: k.policy, route: k.route });

      it('a trip in one process rejects in every other', async () => {
        const k = key();
        const local = redisCircuitBreakerStore(admin, opts);
        await trip(local, k, params());
        for (const r of replicas) {
          expect(await r.call('acquire', { key: wire(k), params: params() })).toMatchObject({
            admitted: false,
            state: 'open',
          });
        }
        const k2 = key();
        await replicas[0]!.call('stress', {
          key: wire(k2),
          params: params(),
          count: 4,
          concurrency: 1,
          outcome: 'failure',
        });
        expect(await local.acquire(k2, params(), 0)).toMatchObject({ admitted: false, state: 'open' });
      });

      it('grants exactly halfOpenMaxCalls probes across processes under a concurrent stampede', async () => {
        const k = key();
        await trip(redisCircuitBreakerStore(admin, opts), k, params({ breakDuration: 1000 }));
        // Each replica fires waves of 50 concurrent acquires for 1.4 s: through the rest of the open period and
        // across the move to half-open at +1 s. The stampede's params give leases a long life, so none can expire
        // (and be re-granted, correctly) on a slow machine before the stampede ends.
        const p = params({ breakDuration: 60_000, halfOpenMaxCalls: 3 });
        const results = await Promise.all(
          replicas.map((r) =>
            r.call<{ leases: string[]; transitions: number; rejected: number }>('stampede', {
              key: wire(k),
              params: p,
              duration: 1400,
              concurrency: 50,
            }),
          ),
        );
        const leases = results.flatMap((r) => r.leases);
        expect(leases).toHaveLength(3);
        expect(new Set(leases).size).toBe(3);
        expect(results.reduce((sum, r) => sum + r.transitions, 0)).toBe(1);
        expect(results.reduce((sum, r) => sum + r.rejected, 0)).toBeGreaterThan(100);
      });

      it("the fleet's admitted rate never exceeds permits/per · span + burst", async () => {
        const k = key();
        const p = { permits: 50, per: 1000, burst: 20 };
        const start = await serverNow(admin);
        const results = await Promise.all(
          replicas.map((r) =>
            r.call<{ admitted: number; attempts: number }>('flood', {
              key: wire(k),
              params: p,
              duration: 2000,
              concurrency: 4,
            }),
          ),
        );
        const span = (await serverNow(admin)) - start;
        const admitted = results.reduce((sum, r) => sum + r.admitted, 0);
        const attempts = results.reduce((sum, r) => sum + r.attempts, 0);
        expect(admitted).toBeLessThanOrEqual((p.permits / p.per) * span + p.burst);
        expect(admitted).toBeGreaterThanOrEqual(0.8 * (p.permits / p.per) * 2000);
        expect(attempts).toBeGreaterThan(2 * admitted); // the limit was binding
      });

      it('shares one digest: every process feeds the same epochs', async () => {
        const k = key();
        const dp = { quantile: 0.9, window: 300 };
        await Promise.all(
          replicas.map((r, j) =>
            r.call('observe-many', {
              key: wire(k),
              params: dp,
              values: Array.from({ length: 100 }, (_, i) => 1 + j + 3 * i),
            }),
          ),
        );
        const p90 = await redisLatencyDigestStore(admin, opts).read(k, dp, 0);
        expect(Math.abs(p90! - 270) / 270).toBeLessThan(0.02);
      });

      it('loses no update when processes record concurrently', async () => {
        const k = key();
        const p = params({ minThroughput: 1_000_000 });
        await Promise.all(
          replicas.map((r) =>
            r.call('stress', { key: wire(k), params: p, count: 300, concurrency: 20, outcome: 'success' }),
          ),
        );
        expect(await redisCircuitBreakerStore(admin, opts).inspect(k, p, 0)).toMatchObject({ calls: 900 });
      });
    });
  });
} else {
  describe('a fleet sharing Redis', () => reportRedisUnreachable());
}
