import { spawnSync } from 'node:child_process';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import {
  createClient as createClient6,
  createCluster as createCluster6,
  createSentinel as createSentinel6,
} from 'redis6';
import { REDIS_REQUIRED } from './redis-test-env';

/*
 * Clients of both families for the topology tests, created the way the README tells users to: ioredis `Redis`,
 * Sentinel-backed `Redis` and `Cluster`; node-redis `createClient`, `createCluster`, `createSentinel` (connected).
 * Every one is tracked so `closeAll` ends them (a client left reconnecting would keep Jest from exiting).
 */

/** The topology tests need the redis-server binary; in CI (CI=true) they are required, so a missing one fails. */
export const REDIS_SERVER_BINARY: boolean =
  spawnSync('redis-server', ['--version'], { timeout: 5000 }).status === 0;
export const RUN_TOPOLOGY_TESTS = REDIS_SERVER_BINARY || REDIS_REQUIRED;

type Closable = { disconnect?(): void; destroy?(): unknown };
const open: Closable[] = [];
const track = <T extends Closable>(c: T): T => {
  open.push(c);
  return c;
};

export async function closeAll(): Promise<void> {
  for (const c of open.splice(0)) {
    try {
      if (typeof c.destroy === 'function') await c.destroy();
      else c.disconnect?.();
    } catch {
      // already closed
    }
  }
}

const quiet = <T extends { on(event: 'error', l: (e: unknown) => void): unknown }>(c: T): T => {
  c.on('error', () => {});
  return c;
};

type Node = { host: string; port: number };

export function ioredisCluster(seeds: Node[]): Cluster {
  return track(
    quiet(
      new Cluster(seeds, {
        redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2000 },
        clusterRetryStrategy: () => 100,
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        slotsRefreshTimeout: 2000,
      }),
    ),
  );
}

export function ioredisSentinel(sentinels: Node[], name: string): Redis {
  return track(quiet(new Redis({ sentinels, name, maxRetriesPerRequest: 1, connectTimeout: 2000 })));
}

export async function nodeRedisClient(url: string) {
  const c = track(quiet(createClient({ url, socket: { connectTimeout: 2000 } })));
  await c.connect();
  return c;
}

/** node-redis 6 (the `redis6` alias of `redis@6` among the dev dependencies), standalone. */
export async function nodeRedis6Client(url: string) {
  const c = track(quiet(createClient6({ url, socket: { connectTimeout: 2000 } })));
  await c.connect();
  return c;
}

/** The cluster options of every node-redis cluster here, 5 and 6 alike (their `createCluster` take the same). */
const clusterOptions = (seeds: Node[]) => ({
  rootNodes: seeds.map((s) => ({ socket: { host: s.host, port: s.port } })),
  defaults: { socket: { connectTimeout: 2000, reconnectStrategy: () => 100 } },
});

export async function nodeRedisCluster(seeds: Node[]) {
  const c = track(quiet(createCluster(clusterOptions(seeds))));
  await c.connect();
  return c;
}

/** node-redis 6's `createCluster` (RESP3 by default, where 5 speaks RESP2). */
export async function nodeRedis6Cluster(seeds: Node[]) {
  const c = track(quiet(createCluster6(clusterOptions(seeds))));
  await c.connect();
  return c;
}

export async function nodeRedisSentinel(sentinels: Node[], name: string) {
  const c = track(quiet(createSentinel({ name, sentinelRootNodes: sentinels })));
  await c.connect();
  return c;
}

/** node-redis 6's `createSentinel`. */
export async function nodeRedis6Sentinel(sentinels: Node[], name: string) {
  const c = track(quiet(createSentinel6({ name, sentinelRootNodes: sentinels })));
  await c.connect();
  return c;
}
