import type { Redis } from 'ioredis';
import {
  RUN_TOPOLOGY_TESTS,
  closeAll,
  ioredisSentinel,
  nodeRedis6Sentinel,
  nodeRedisSentinel,
} from './__tests__/clients';
import { RedisSentinelTopology } from './__tests__/redis-topology';
import { describeStoreConformance } from './__tests__/store-conformance';
import { uniquePrefix } from './__tests__/redis-test-env';
import type { RedisClient } from './redis-commands';

/**
 * The conformance suites through Sentinel (a master, a replica and three sentinels of the file's own), with both
 * clients: ioredis `new Redis({ sentinels, name })` and node-redis `createSentinel({ name, sentinelRootNodes })`, of the
 * `redis` package 5 and 6.
 */
if (RUN_TOPOLOGY_TESTS) {
  const prefix = uniquePrefix('sentinel');
  let topology: RedisSentinelTopology;
  let io: Redis;
  let nr: RedisClient;
  let nr6: RedisClient;
  beforeAll(async () => {
    topology = await RedisSentinelTopology.start();
    io = ioredisSentinel(topology.sentinelNodes, topology.name);
    nr = (await nodeRedisSentinel(topology.sentinelNodes, topology.name)) as unknown as RedisClient;
    nr6 = (await nodeRedis6Sentinel(topology.sentinelNodes, topology.name)) as unknown as RedisClient;
  }, 90_000);
  afterAll(async () => {
    await closeAll();
    await topology?.stop();
  });

  // Scripts write, and a replica refuses writes (READONLY): the suites below passing proves each client follows the
  // sentinels to the master.
  it('the sentinels name the master, and the ioredis client is on it', async () => {
    expect(await io.call('ROLE')).toEqual(expect.arrayContaining(['master']));
    expect(await io.call('CONFIG', 'GET', 'port')).toEqual(['port', String(topology.master)]);
  });

  describeStoreConformance('ioredis Sentinel', () => io, `${prefix}:io`, { concurrency: 200 });
  describeStoreConformance('node-redis Sentinel', () => nr, `${prefix}:nr`, { concurrency: 200 });
  describeStoreConformance('node-redis 6 Sentinel', () => nr6, `${prefix}:nr6`, { concurrency: 200 });
  // The control store with SSUBSCRIBE/SPUBLISH notices (pubsub: 'sharded'), which Redis 7 has outside a Cluster too.
  describeStoreConformance('ioredis Sentinel, sharded pub/sub', () => io, `${prefix}:io-sharded`, {
    concurrency: 200,
    pubsub: 'sharded',
  });
  describeStoreConformance('node-redis Sentinel, sharded pub/sub', () => nr, `${prefix}:nr-sharded`, {
    concurrency: 200,
    pubsub: 'sharded',
  });
} else {
  describe('Redis Sentinel', () => {
    it('needs the redis-server binary (missing; CI=true makes this a failure)', () => {
      expect(RUN_TOPOLOGY_TESTS).toBe(false);
    });
  });
}
