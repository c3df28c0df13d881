import { stateKey } from '@ballast/core';
import { RUN_TOPOLOGY_TESTS } from './__tests__/clients';
import { failoverUnderLoad, startFleet, type FailoverTarget } from './__tests__/fleet-failover';
import type { Replica } from './__tests__/fleet-replica';
import { RedisClusterTopology, cli, replicaRead, until } from './__tests__/redis-topology';
import { uniquePrefix } from './__tests__/redis-test-env';

/**
 * `npm run test:redis-fleet` (never in `npm test`): three Node processes, each with its own Cluster client, call
 * through a shared breaker and rate limit on a real three-master Cluster while one master crashes (SIGKILL), then
 * while another hands over with a planned `CLUSTER FAILOVER`: with ioredis, then the planned one again with node-redis
 * 5. (node-redis 5 is not in the crash: its cluster client re-reads the slot map only on MOVED, which a dead master
 * never sends, so it does not recover on its own — see the README.) See src/__tests__/fleet-failover.ts for what is
 * checked.
 */
if (RUN_TOPOLOGY_TESTS) {
  describe('a fleet of processes on a Redis Cluster whose master fails over under load', () => {
    jest.setTimeout(120_000);
    const prefix = uniquePrefix('fleet-failover');
    let cluster: RedisClusterTopology;
    const fleets: Record<'ioredis' | 'node-redis' | 'node-redis6', Replica[]> = {
      ioredis: [],
      'node-redis': [],
      'node-redis6': [],
    };
    beforeAll(async () => {
      cluster = await RedisClusterTopology.start();
      const start = (client: keyof typeof fleets) =>
        startFleet(3, JSON.stringify({ cluster: cluster.seeds, client }), prefix);
      [fleets.ioredis, fleets['node-redis'], fleets['node-redis6']] = await Promise.all([
        start('ioredis'),
        start('node-redis'),
        start('node-redis6'),
      ]);
    }, 90_000);
    afterAll(async () => {
      await Promise.all(Object.values(fleets).flatMap((fleet) => fleet.map((r) => r.stop())));
      await cluster?.stop();
    });

    /** A master that still has a live replica (the one it fails over to), and the run's view of it. */
    function target(
      label: string,
      failover: (master: number, replica: number) => Promise<void>,
    ): FailoverTarget {
      const tag = (policy: string, route: string) => `${prefix}:{${stateKey(policy, route).id}}`;
      const routes = Array.from({ length: 500 }, (_, i) => `r${i}`);
      const masterOf = cluster.masters();
      const victim = [...new Set(routes.map((r) => masterOf(tag(`open-${label}`, r))))].find((m) => {
        try {
          cluster.replicaOf(m);
          return true;
        } catch {
          return false;
        }
      })!;
      const replica = cluster.replicaOf(victim);
      const routeOn = (policy: string) => routes.find((r) => masterOf(tag(policy, r)) === victim)!;
      const open = routeOn('open');
      return {
        routeOn,
        replicated: (key) => replicaRead(replica, 'HLEN', key) === '1',
        failover: async () => {
          await failover(victim, replica);
          await cluster.healthy(30_000);
          expect(cluster.masterOf(tag('open', open))).toBe(replica);
        },
      };
    }

    /** A planned handover: the replica takes over with `CLUSTER FAILOVER` (the old master becomes its replica). */
    const planned = async (master: number, replica: number) => {
      cli(replica, 'CLUSTER', 'FAILOVER');
      await until(20_000, `${replica} took over from ${master}`, () =>
        cli(replica, 'ROLE').startsWith('master'),
      );
    };

    it('a master crashes: calls go on (or fail typed), the probe lease survives, the rate is exact again', async () => {
      await failoverUnderLoad(
        fleets.ioredis,
        prefix,
        'crash',
        target('crash', (master) => cluster.kill(master)),
        true,
      );
    });

    it('a planned CLUSTER FAILOVER: the same checks, strict calls need not fail', async () => {
      await failoverUnderLoad(fleets.ioredis, prefix, 'planned', target('planned', planned), false);
    });

    it('a planned CLUSTER FAILOVER with node-redis 5 clients: the same checks', async () => {
      await failoverUnderLoad(
        fleets['node-redis'],
        prefix,
        'planned-nr',
        target('planned-nr', planned),
        false,
      );
    });

    it('a master crashes under node-redis 6 clients (they re-read the slot map when a node is lost): the same checks', async () => {
      await failoverUnderLoad(
        fleets['node-redis6'],
        prefix,
        'crash-nr6',
        target('crash-nr6', (master) => cluster.kill(master)),
        true,
        10_000,
      );
    });
  });
} else {
  describe('Redis Cluster fleet failover', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}
