import { RUN_TOPOLOGY_TESTS } from './__tests__/clients';
import { failoverUnderLoad, startFleet } from './__tests__/fleet-failover';
import type { Replica } from './__tests__/fleet-replica';
import { RedisSentinelTopology, cli, until } from './__tests__/redis-topology';
import { uniquePrefix } from './__tests__/redis-test-env';

/**
 * `npm run test:redis-fleet` (never in `npm test`): three Node processes, each with its own client that finds the
 * master through Sentinel, call through a shared breaker and rate limit while the master crashes (SIGKILL) and the
 * sentinels promote the replica; once with ioredis, once with node-redis 5's `createSentinel`, each on a Sentinel
 * set-up of its own (a crash leaves one server). See src/__tests__/fleet-failover.ts for what is checked.
 */
if (RUN_TOPOLOGY_TESTS) {
  describe.each(['ioredis', 'node-redis'])(
    'a fleet of %s processes behind Sentinel whose master crashes under load',
    (client) => {
      jest.setTimeout(120_000);
      const prefix = uniquePrefix('fleet-failover');
      let sentinel: RedisSentinelTopology;
      let fleet: Replica[] = [];
      beforeAll(async () => {
        sentinel = await RedisSentinelTopology.start();
        const connection = JSON.stringify({ sentinels: sentinel.sentinelNodes, name: sentinel.name, client });
        fleet = await startFleet(3, connection, prefix);
      }, 90_000);
      afterAll(async () => {
        await Promise.all(fleet.map((r) => r.stop()));
        await sentinel?.stop();
      });

      it('calls go on (or fail typed), the probe lease survives the promotion, the rate is exact again', async () => {
        const { master, replica, sentinels, name } = sentinel;
        await failoverUnderLoad(
          fleet,
          prefix,
          'crash',
          {
            routeOn: () => 'r0', // one master holds every key
            replicated: (key) => cli(replica, 'HLEN', key) === '1',
            failover: async () => {
              await sentinel.kill(master);
              await until(30_000, `the sentinels promoted ${replica}`, () =>
                sentinels.every((s) =>
                  cli(s, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name).endsWith(String(replica)),
                ),
              );
              await until(10_000, `${replica} is a master`, () => cli(replica, 'ROLE').startsWith('master'));
            },
          },
          true,
        );
      });
    },
  );
} else {
  describe('Redis Sentinel fleet failover', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}
