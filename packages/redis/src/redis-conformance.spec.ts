import type { Redis } from 'ioredis';
import { nodeRedis6Client, nodeRedisClient, closeAll } from './__tests__/clients';
import {
  REDIS_URL,
  RUN_REDIS_TESTS,
  cleanUp,
  requireRedis,
  newClient,
  reportRedisUnreachable,
  uniquePrefix,
} from './__tests__/redis-test-env';
import { describeStoreConformance } from './__tests__/store-conformance';
import type { RedisClient } from './redis-commands';

// The same suites core's in-memory stores pass, on the real Redis, through each client family: ioredis `Redis` and
// node-redis `createClient`, of the `redis` package 5 and 6 (Cluster and Sentinel, with the same three clients:
// redis-cluster / redis-sentinel .integration.spec.ts).
if (RUN_REDIS_TESTS) {
  const prefix = uniquePrefix('conformance');
  let client: Redis | undefined;
  let nodeRedis: RedisClient | undefined;
  let nodeRedis6: RedisClient | undefined;
  const redis = (): Redis => (client ??= newClient());
  beforeAll(async () => {
    await requireRedis(redis());
    nodeRedis = (await nodeRedisClient(REDIS_URL)) as unknown as RedisClient;
    nodeRedis6 = (await nodeRedis6Client(REDIS_URL)) as unknown as RedisClient;
  });
  afterAll(async () => {
    await cleanUp(prefix, [client]);
    await closeAll();
  });

  it('runs on the real Redis server', async () => {
    expect(await redis().ping()).toBe('PONG');
  });

  const subscribers: Redis[] = [];
  afterAll(() => subscribers.forEach((s) => s.disconnect()));
  describeStoreConformance('ioredis, caller time', redis, `${prefix}:io`, {
    subscriber: () => {
      const s = redis().duplicate();
      subscribers.push(s);
      return s;
    },
  });
  describeStoreConformance('node-redis, caller time', () => nodeRedis!, `${prefix}:nr`);
  describeStoreConformance('node-redis 6, caller time', () => nodeRedis6!, `${prefix}:nr6`);
} else {
  describe('Redis store conformance', () => reportRedisUnreachable());
}
