import { stateKey } from '@ballast/core';
import type { Cluster } from 'ioredis';
import {
  RUN_TOPOLOGY_TESTS,
  closeAll,
  ioredisCluster,
  nodeRedis6Cluster,
  nodeRedisCluster,
} from './__tests__/clients';
import { cli, RedisClusterTopology } from './__tests__/redis-topology';
import { describeStoreConformance } from './__tests__/store-conformance';
import { uniquePrefix } from './__tests__/redis-test-env';
import type { RedisClient } from './redis-commands';
import { RedisCircuitBreakerStore } from './redis-circuit-breaker-store';
import { RedisControlStore } from './redis-control-store';
import { RedisLatencyDigestStore } from './redis-latency-digest-store';
import { RedisRateLimitStore } from './redis-rate-limit-store';

/**
 * SPEC §14.5 on a real Redis Cluster of the file's own (three masters, three replicas on loopback ports), with both
 * clients (ioredis, and node-redis 5 and 6): the conformance suites, one slot per script (CROSSSLOT would fail it),
 * and control notices across nodes.
 */
if (RUN_TOPOLOGY_TESTS) {
  const prefix = uniquePrefix('cluster');
  let cluster: RedisClusterTopology;
  let io: Cluster;
  let nr: RedisClient;
  let nr6: RedisClient;
  beforeAll(async () => {
    cluster = await RedisClusterTopology.start();
    io = ioredisCluster(cluster.seeds);
    nr = (await nodeRedisCluster(cluster.seeds)) as unknown as RedisClient;
    nr6 = (await nodeRedis6Cluster(cluster.seeds)) as unknown as RedisClient;
  }, 90_000);
  afterAll(async () => {
    await closeAll();
    await cluster?.stop();
  });

  describeStoreConformance('ioredis Cluster', () => io, `${prefix}:io`, { concurrency: 200 });
  describeStoreConformance('node-redis cluster', () => nr, `${prefix}:nr`, { concurrency: 200 });
  describeStoreConformance('node-redis 6 cluster', () => nr6, `${prefix}:nr6`, { concurrency: 200 });
  // The control store with SPUBLISH/SSUBSCRIBE notices (pubsub: 'sharded'), through each client.
  for (const [label, id, client] of [
    ['ioredis Cluster', 'io', () => io],
    ['node-redis cluster', 'nr', () => nr],
    ['node-redis 6 cluster', 'nr6', () => nr6],
  ] as const)
    describeStoreConformance(`${label}, sharded pub/sub`, client, `${prefix}:sharded-${id}`, {
      concurrency: 200,
      pubsub: 'sharded',
    });

  describe('Redis Cluster: one slot per script', () => {
    it('keys of one (policy, route) share a slot, spread over masters, and a two-slot script is refused', async () => {
      const p = `${prefix}:slots`;
      const options = { prefix: p, commandTimeout: 5000 };
      const cb = new RedisCircuitBreakerStore(nr, options);
      const rl = new RedisRateLimitStore(io, options);
      const dd = new RedisLatencyDigestStore(nr, options);
      const params = {
        failureRatio: 0.5,
        minThroughput: 1,
        samplingWindow: 10_000,
        breakDuration: 1000,
        halfOpenMaxCalls: 1,
      };
      const routes = Array.from({ length: 12 }, (_, i) => stateKey('checkout', `r${i}`));
      for (const k of routes) {
        await cb.record(k, params, { generation: 0, lease: undefined }, 'failure', 0);
        await rl.take(k, { permits: 10, per: 1000, burst: 10 }, 0);
        await dd.observe(k, { quantile: 0.95, window: 100 }, 12, 0);
      }
      // Every key the stores wrote, from each node (test-only SCAN), grouped by hash tag.
      const keys = cluster.ports.flatMap((port) =>
        cli(port, '--scan', '--pattern', `${p}:*`).split('\n').filter(Boolean),
      );
      const slots = new Map<string, Set<number>>();
      for (const key of new Set(keys)) {
        const tag = /\{(.*?)\}/.exec(key)![1]!;
        const set = slots.get(tag) ?? new Set();
        set.add(Number(cli(cluster.ports[0]!, 'CLUSTER', 'KEYSLOT', key)));
        slots.set(tag, set);
      }
      expect([...slots.keys()].sort()).toEqual(routes.map((k) => k.id).sort());
      expect(new Set(keys).size).toBeGreaterThanOrEqual(routes.length * 3);
      for (const set of slots.values()) expect(set.size).toBe(1);
      const masters = new Set(routes.map((k) => cluster.masterOf(`${p}:{${k.id}}`)));
      expect(masters.size).toBeGreaterThan(1);
      // The server would catch a script that spans slots: the guarantee the test above relies on.
      await expect(
        io.eval("return redis.call('GET', KEYS[1]) or redis.call('GET', KEYS[2])", 2, `${p}:{a}`, `${p}:{b}`),
      ).rejects.toThrow(/CROSSSLOT/);
    });
  });

  describe('Redis Cluster: control notices', () => {
    it('a write through one client reaches subscribers of both clients, via other nodes', async () => {
      const p = `${prefix}:notices`;
      const byIo = new RedisControlStore(io, { prefix: p, commandTimeout: 5000 });
      const byNr = new RedisControlStore(nr, { prefix: p, commandTimeout: 5000 });
      const heard: Record<string, number[]> = { io: [], nr: [] };
      const subs = [
        await byIo.subscribe((seq) => heard['io']!.push(seq)),
        await byNr.subscribe((seq) => heard['nr']!.push(seq)),
      ];
      try {
        const first = await byNr.write({ action: 'forceOpen', policy: 'payments', replica: 'a' }, 0);
        const second = await byIo.write({ action: 'clearForcedOpen', policy: 'payments', replica: 'b' }, 0);
        const heardEach = async (n: number) => {
          for (let i = 0; i < 100 && (heard['io']!.length < n || heard['nr']!.length < n); i++)
            await new Promise((r) => setTimeout(r, 20));
        };
        // Notices from one node arrive in order; from two nodes, in any order: the writes' first.
        await heardEach(2);
        // A notice published on a node that serves another slot reaches them too (PUBLISH is cluster-wide).
        const other = cluster.ports.find((port) => port !== cluster.masterOf(`${p}:{control}`))!;
        cli(other, 'PUBLISH', `${p}:{control}:changes`, '12345');
        const want = [first, second].map((r) => (r.ok ? r.seq : -1)).concat(12345);
        await heardEach(3);
        expect(heard).toEqual({ io: want, nr: want });
      } finally {
        subs.forEach((s) => s.close());
      }
    });
  });
} else {
  describe('Redis Cluster', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}
