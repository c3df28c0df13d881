import { Resilience, ResiliencePolicy } from '@ballast/core';
import type { RedisClient } from '../redis-commands';
import { RedisControlStore } from '../redis-control-store';
import { ioredisCluster, nodeRedis6Cluster, nodeRedisCluster } from './clients';
import { cli, until, type RedisClusterTopology } from './redis-topology';

/*
 * The control store with `pubsub: 'sharded'` on a real Cluster (run by redis-cluster-failover.integration.spec.ts on
 * its cluster, after its crash test): SPUBLISH from the write script reaches SSUBSCRIBE subscribers of ioredis,
 * node-redis 5 and node-redis 6 on the shard that owns `{control}`; then that shard's master hands over with
 * `CLUSTER FAILOVER`, and the test asserts what each client does about it.
 */

type Label = 'io' | 'nr' | 'nr6';
const LABELS: Label[] = ['io', 'nr', 'nr6'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(ms: number, what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

export function describeShardedNotices(topology: () => RedisClusterTopology, prefix: string): void {
  describe('Redis Cluster: sharded control notices (pubsub: sharded)', () => {
    jest.setTimeout(60_000);
    let p: string;
    let channel: string;
    const clients = {} as Record<Label, RedisClient>;
    const stores = {} as Record<Label, RedisControlStore>;
    const heard: Record<Label, number[]> = { io: [], nr: [], nr6: [] };
    const subscriptions: { close(): void }[] = [];
    // The cluster lost a master to the crash test before this suite: a subscriber connection may still try the dead
    // node (or the master this suite hands over) and report it as one BallastControlWarning per outage, which is
    // what the store is meant to do. Those are kept here; every other warning still fails the suite (strict-process).
    const subscriberWarnings: string[] = [];
    let warnings: jest.SpyInstance | undefined;
    beforeAll(async () => {
      const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
      warnings = jest.spyOn(process, 'emitWarning').mockImplementation(((
        warning: unknown,
        ...rest: unknown[]
      ) => {
        if (rest[0] === 'BallastControlWarning' && String(warning).includes('subscriber connection'))
          subscriberWarnings.push(String(warning));
        else emit(warning, ...rest);
      }) as typeof process.emitWarning);
      const cluster = topology();
      // A prefix whose `{control}` slot is on a master that still has a live replica (the crash test took one).
      for (let i = 0; ; i++) {
        p = `${prefix}:sharded${i}`;
        try {
          cluster.replicaOf(cluster.masterOf(`${p}:{control}`));
          break;
        } catch {
          expect(i).toBeLessThan(20);
        }
      }
      channel = `${p}:{control}:changes`;
      clients.io = ioredisCluster(cluster.seeds);
      clients.nr = (await nodeRedisCluster(cluster.seeds)) as unknown as RedisClient;
      clients.nr6 = (await nodeRedis6Cluster(cluster.seeds)) as unknown as RedisClient;
      for (const label of LABELS) {
        stores[label] = new RedisControlStore(clients[label], {
          prefix: p,
          commandTimeout: 5000,
          pubsub: 'sharded',
        });
        subscriptions.push(await stores[label].subscribe((seq) => heard[label].push(seq)));
      }
    });
    afterAll(() => {
      subscriptions.forEach((s) => s.close());
      warnings?.mockRestore();
      // Each names this suite's channel: no other subscription of the run failed.
      expect(subscriberWarnings.filter((w) => !w.includes(`(${channel})`))).toEqual([]);
    });

    it('each client subscribes on the shard that owns {control}, and hears every write in order', async () => {
      const cluster = topology();
      const owner = cluster.masterOf(`${p}:{control}`);
      expect(cli(owner, 'PUBSUB', 'SHARDNUMSUB', channel).split('\n')).toEqual([channel, '3']);
      // Nothing listens on the classic channel: these notices are SPUBLISHed, never forwarded to other shards.
      expect(cli(owner, 'PUBSUB', 'NUMSUB', channel).split('\n')).toEqual([channel, '0']);
      const seqs: number[] = [];
      for (const label of LABELS) {
        const r = await stores[label].write({ action: 'forceOpen', policy: `p-${label}`, replica: label }, 0);
        seqs.push(r.ok ? r.seq : -1);
      }
      await eventually(3000, 'every subscriber heard the three writes', () =>
        LABELS.every((l) => heard[l].length >= 3),
      );
      expect(heard).toEqual({ io: seqs, nr: seqs, nr6: seqs });
    });

    it('after a CLUSTER FAILOVER of that shard: ioredis and node-redis 6 hear later writes; node-redis 5 hears none, and the reconcile applies them', async () => {
      const cluster = topology();
      const policies = () => [new ResiliencePolicy({ name: 'payments', strategies: [] })];
      // A replica on node-redis 5 whose notices travel sharded, reconciling every 200 ms.
      const nr5 = new Resilience({
        policies: policies(),
        stores: {
          control: new RedisControlStore(clients.nr, {
            prefix: p,
            pubsub: 'sharded',
            reconcileInterval: 200,
          }),
        },
        replicaId: 'nr5',
      });
      const call = () =>
        nr5.run(() => 'ok', { policy: 'payments' }).catch((e: { code?: string }) => e.code ?? String(e));
      try {
        await stores.io.write({ action: 'forceOpen', policy: 'payments', replica: 'io' }, 0);
        await eventually(
          5000,
          'the node-redis 5 replica applied the force-open',
          async () => (await call()) === 'resilience_forced_open',
        );

        const before = Math.max(...heard.io);
        const owner = cluster.masterOf(`${p}:{control}`);
        const replica = cluster.replicaOf(owner);
        cli(replica, 'CLUSTER', 'FAILOVER');
        await until(20_000, `${replica} took over from ${owner}`, () =>
          cli(replica, 'ROLE').startsWith('master'),
        );
        await cluster.healthy(30_000);

        // A write every 250 ms until both moved their subscription to the new master (a write at the very moment
        // of the handover can be missed: the reconcile's business), then one more that both must hear.
        let last = before;
        await eventually(10_000, 'ioredis and node-redis 6 hear a write after the failover', async () => {
          const r = await stores.io.write({ action: 'forceOpen', policy: `after-${last}`, replica: 'io' }, 0);
          if (r.ok) last = r.seq;
          await sleep(200);
          return heard.io.some((s) => s > before) && heard.nr6.some((s) => s > before);
        });
        const final = await stores.nr6.write(
          { action: 'clearForcedOpen', policy: 'payments', replica: 'nr6' },
          0,
        );
        expect(final.ok).toBe(true);
        const seq = final.ok ? final.seq : -1;
        await eventually(
          3000,
          'both hear the last write',
          () => heard.io.includes(seq) && heard.nr6.includes(seq),
        );

        // node-redis 5.12.4's cluster re-subscribes on a `server-sunsubscribe` event its client never emits (it emits
        // `sharded-channel-moved`, which node-redis 6 listens for): its subscription stays on the old master …
        expect(heard.nr.filter((s) => s > before)).toEqual([]);
        // … so the reconcile (one `seq` read every 200 ms) is what brings the clear to that replica.
        await eventually(
          3000,
          'the node-redis 5 replica applied the clear',
          async () => (await call()) === 'ok',
        );
      } finally {
        await nr5.close();
      }
    });
  });
}
