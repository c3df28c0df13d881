import path from 'node:path';
import type { Redis } from 'ioredis';
import { Replica } from './__tests__/fleet-replica';
import { RedisServerProcess, freePort } from './__tests__/redis-server-process';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  newClient,
  reportRedisUnreachable,
  requireRedis,
  uniquePrefix,
} from './__tests__/redis-test-env';

/**
 * SPEC §14.1 across real processes: every replica is a Node process of its own (test/control-child.cjs) with its own
 * Redis connections and a Resilience on redisControlStore. "Within 1 s" is a real-time bound, as the issue states it:
 * the replicas run on the system clock, so these waits are polls with a deadline, never fixed sleeps.
 */

const CHILD = path.resolve(__dirname, '..', 'test', 'control-child.cjs');

type Admin = { ok?: unknown; error?: { kind: string; code: string; message: string } };

/** Polls `check` every 20 ms until it holds; fails after `ms`. Answers how long it took. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const run = (r: Replica, policy: string, route?: string) =>
  r.call<string>('run', { policy, route: route ?? null });
const admin = (r: Replica, method: string, ...args: unknown[]) => r.call<Admin>('admin', { method, args });
const all = (replicas: Replica[], policy: string, route?: string) =>
  Promise.all(replicas.map((r) => run(r, policy, route)));
const every = (values: string[], v: string) => values.every((x) => x === v);

if (RUN_REDIS_TESTS) {
  describe('fleet control plane on Redis, three replica processes', () => {
    jest.setTimeout(60_000);
    const prefix = uniquePrefix('control-fleet');
    let redis: Redis;
    const replicas: Replica[] = [];
    const start = async (id: string, extra: Record<string, unknown> = {}, url = REDIS_URL, p = prefix) => {
      const r = new Replica({ prefix: p, replicaId: id, ...extra }, { child: CHILD, url });
      await r.ready;
      replicas.push(r);
      return r;
    };

    beforeAll(async () => {
      redis = newClient();
      await requireRedis(redis);
    });
    afterEach(async () => {
      await Promise.all(replicas.splice(0).map((r) => r.stop()));
    });
    afterAll(() => cleanUp(prefix, [redis]));

    it('a force-open on one replica is in force on all three within 1 s; a clear likewise; the audit says who and why', async () => {
      const p = `${prefix}:a`;
      const fleet = [
        await start('a0', {}, REDIS_URL, p),
        await start('a1', {}, REDIS_URL, p),
        await start('a2', {}, REDIS_URL, p),
      ];
      expect(await all(fleet, 'payments')).toEqual(['ok', 'ok', 'ok']);
      expect(
        await admin(fleet[0]!, 'forceOpen', 'payments', undefined, { reason: 'incident 42', actor: 'alice' }),
      ).toEqual({ ok: null });
      await within(1000, 'force-open seen by all', async () =>
        every(await all(fleet, 'payments'), 'resilience_forced_open'),
      );
      expect(await all(fleet, 'search')).toEqual(['ok', 'ok', 'ok']);
      await admin(fleet[2]!, 'clearForcedOpen', 'payments');
      await within(1000, 'clear seen by all', async () => every(await all(fleet, 'payments'), 'ok'));
      const trail = (await admin(fleet[1]!, 'audit', { limit: 5 })).ok as {
        action: string;
        replica: string;
      }[];
      expect(trail.map((e) => [e.action, e.replica])).toEqual([
        ['clearForcedOpen', 'a2'],
        ['forceOpen', 'a0'],
      ]);
      expect(trail[1]).toMatchObject({ actor: 'alice', reason: 'incident 42', scope: 'fleet' });
      const listed = (await admin(fleet[0]!, 'replicas')).ok as { id: string; version: number }[];
      expect(listed.map((r) => r.id).sort()).toEqual(['a0', 'a1', 'a2']);
    });

    it('a ttl clears the override on every replica when it ends', async () => {
      const p = `${prefix}:b`;
      const fleet = [
        await start('b0', {}, REDIS_URL, p),
        await start('b1', {}, REDIS_URL, p),
        await start('b2', {}, REDIS_URL, p),
      ];
      await admin(fleet[1]!, 'forceOpen', 'payments', 'eu', { ttl: 1500 });
      await within(1000, 'force-open seen by all', async () =>
        every(await all(fleet, 'payments', 'eu'), 'resilience_forced_open'),
      );
      expect(await all(fleet, 'payments', 'us')).toEqual(['ok', 'ok', 'ok']);
      await within(2500, 'expired everywhere', async () => every(await all(fleet, 'payments', 'eu'), 'ok'));
      const applied = (await fleet[0]!.call<{ action: string; expired?: boolean }[]>('applied')).map((e) => [
        e.action,
        e.expired ?? false,
      ]);
      expect(applied).toEqual([
        ['forceOpen', false],
        ['clearForcedOpen', true],
      ]);
    });

    it('of two replicas retuning with the same ifVersion, exactly one wins, and all three run its spec', async () => {
      const p = `${prefix}:c`;
      const fleet = [
        await start('c0', {}, REDIS_URL, p),
        await start('c1', {}, REDIS_URL, p),
        await start('c2', {}, REDIS_URL, p),
      ];
      const spec = (n: number) => ({ name: 'search', strategies: [{ type: 'retry', maxAttempts: n }] });
      const [x, y] = await Promise.all([
        admin(fleet[0]!, 'retune', spec(2), { ifVersion: 0 }),
        admin(fleet[1]!, 'retune', spec(3), { ifVersion: 0 }),
      ]);
      const results = [x!, y!];
      expect(results.filter((r) => r.ok !== undefined)).toEqual([{ ok: { policy: 'search', version: 1 } }]);
      expect(results.filter((r) => r.error !== undefined)).toEqual([
        { error: expect.objectContaining({ kind: 'conflict', code: 'version_conflict' }) },
      ]);
      const winner = x!.ok !== undefined ? 2 : 3;
      await within(1000, 'every replica on the winner', async () => {
        const specs = await Promise.all(
          fleet.map((r) => r.call<{ strategies: { maxAttempts?: number }[] }>('spec', { policy: 'search' })),
        );
        return specs.every((s) => s.strategies[0]?.maxAttempts === winner);
      });
      const states = await Promise.all(fleet.map((r) => admin(r, 'inspect', { policy: 'search' })));
      // inspect lists routes seen; run one call first so each replica has the key.
      await all(fleet, 'search');
      const after = await Promise.all(fleet.map((r) => admin(r, 'inspect', { policy: 'search' })));
      expect(states).toHaveLength(3);
      for (const s of after) expect((s.ok as { version: number }[]).map((e) => e.version)).toEqual([1]);
    });

    it('a replica whose subscriber connection is killed (CLIENT KILL) converges through the reconcile', async () => {
      const p = `${prefix}:d`;
      const channel = `${p}:{control}:changes`;
      const fleet = [
        await start('d0', {}, REDIS_URL, p),
        await start('d1', { autoResubscribe: false }, REDIS_URL, p),
      ];
      const subscribersOf = async () =>
        Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1]);
      expect(await subscribersOf()).toBe(2);
      const list = String(await redis.client('LIST'));
      const line = list.split('\n').find((l) => l.includes('name=ballast-ctl-d1'));
      const id = /(?:^|\s)id=(\d+)/.exec(line ?? '')?.[1];
      expect(id).toBeDefined();
      await redis.client('KILL', 'ID', id!);
      await within(2000, 'the killed subscription gone', async () => (await subscribersOf()) === 1);
      await admin(fleet[0]!, 'forceOpen', 'payments');
      await within(
        1000,
        'd1 converged without a push',
        async () => (await run(fleet[1]!, 'payments')) === 'resilience_forced_open',
      );
      expect(await subscribersOf()).toBe(1); // it was the reconcile, not a new subscription
    });

    it('a replica started while overrides stand applies them before its first call', async () => {
      const p = `${prefix}:e`;
      const first = await start('e0', {}, REDIS_URL, p);
      await admin(first, 'forceOpen', 'payments', 'eu', { ttl: 60_000 });
      await admin(first, 'retune', { name: 'search', strategies: [{ type: 'retry', maxAttempts: 4 }] });
      const late = await start(
        'e1',
        {
          probes: [
            { policy: 'payments', route: 'eu' },
            { policy: 'payments', route: 'us' },
          ],
        },
        REDIS_URL,
        p,
      );
      expect(late.readyInfo['probes']).toEqual(['resilience_forced_open', 'ok']);
      expect(
        (await late.call<{ strategies: { maxAttempts?: number }[] }>('spec', { policy: 'search' }))
          .strategies[0]?.maxAttempts,
      ).toBe(4);
    });

    it('a message someone else publishes on the channel is ignored and logged, never applied', async () => {
      const p = `${prefix}:f`;
      const fleet = [await start('f0', {}, REDIS_URL, p), await start('f1', {}, REDIS_URL, p)];
      const channel = `${p}:{control}:changes`;
      await redis.publish(channel, JSON.stringify({ action: 'forceOpen', policy: 'payments' }));
      await redis.publish(channel, '99999'); // well-formed: costs one read, changes nothing
      await within(2000, 'the warning logged', async () =>
        fleet.every((r) => r.stderr.includes('ignored a malformed message')),
      );
      expect(await all(fleet, 'payments')).toEqual(['ok', 'ok']);
      await admin(fleet[0]!, 'forceOpen', 'payments');
      await within(1000, 'a real write still works', async () =>
        every(await all(fleet, 'payments'), 'resilience_forced_open'),
      );
    });
  });

  describe('fleet control plane when its Redis stops and starts again (a redis-server of the test’s own)', () => {
    jest.setTimeout(90_000);
    let server: RedisServerProcess;
    const replicas: Replica[] = [];

    beforeAll(async () => {
      server = new RedisServerProcess(await freePort());
      await server.start();
    });
    afterAll(async () => {
      await Promise.all(replicas.splice(0).map((r) => r.stop()));
      await server.destroy();
    });

    it('Redis down: fleet writes answer resilience_store_unavailable and change nothing, calls, reads and local writes work; back up, the fleet converges', async () => {
      const prefix = 'control-restart';
      for (const id of ['g0', 'g1', 'g2']) {
        const r = new Replica({ prefix, replicaId: id }, { child: CHILD, url: server.url });
        await r.ready;
        replicas.push(r);
      }
      const fleet = replicas;
      await admin(fleet[0]!, 'forceOpen', 'search', 'standing');
      await within(1000, 'standing override everywhere', async () =>
        every(await all(fleet, 'search', 'standing'), 'resilience_forced_open'),
      );

      await server.stop();
      const refused = await admin(fleet[0]!, 'forceOpen', 'payments');
      expect(refused.error).toMatchObject({ kind: 'infrastructure', code: 'resilience_store_unavailable' });
      expect(await all(fleet, 'payments')).toEqual(['ok', 'ok', 'ok']);
      expect(await all(fleet, 'search', 'standing')).toEqual(Array(3).fill('resilience_forced_open'));
      const inspected = await admin(fleet[1]!, 'inspect', { policy: 'search' });
      expect(
        (inspected.ok as { route: string; forcedOpen: boolean }[]).find((s) => s.route === 'standing')
          ?.forcedOpen,
      ).toBe(true);
      expect(await admin(fleet[2]!, 'forceOpen', 'payments', undefined, { scope: 'local' })).toEqual({
        ok: null,
      });
      expect(await all(fleet, 'payments')).toEqual(['ok', 'ok', 'resilience_forced_open']);
      expect(await admin(fleet[2]!, 'clearForcedOpen', 'payments', undefined, { scope: 'local' })).toEqual({
        ok: null,
      });

      await server.start();
      // The reconnected replicas take fleet writes again, and every replica applies them.
      await within(
        10_000,
        'a fleet write accepted again',
        async () => (await admin(fleet[1]!, 'forceOpen', 'payments')).ok === null,
      );
      await within(2000, 'the write reached every replica', async () =>
        every(await all(fleet, 'payments'), 'resilience_forced_open'),
      );
      expect(await all(fleet, 'search', 'standing')).toEqual(Array(3).fill('resilience_forced_open')); // survived the restart
      await admin(fleet[0]!, 'clearForcedOpen', 'search');
      await within(2000, 'clear reached every replica', async () =>
        every(await all(fleet, 'search', 'standing'), 'ok'),
      );
    });
  });
} else {
  describe('fleet control plane on Redis', () => reportRedisUnreachable());
}
