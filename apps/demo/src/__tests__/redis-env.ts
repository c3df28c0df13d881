import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * Where the demo's Redis tests find Redis, and whether they run: the same rule as packages/redis's tests (REDIS_URL,
 * else the project machines' local Redis; run when it answers, and required when CI=true, where an unreachable
 * Redis fails them instead of leaving them out).
 */
export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
export const REDIS_REQUIRED = process.env['CI'] === 'true';

/** Whether Redis answers PING, decided synchronously at load (Jest collects tests synchronously). */
export const REDIS_REACHABLE: boolean = (() => {
  const probe = `
    const { Redis } = require('ioredis');
    const r = new Redis(process.argv[1], { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0,
      retryStrategy: () => null });
    r.on('error', () => {});
    r.connect().then(() => r.ping()).then(() => { r.disconnect(); process.exit(0); }, () => process.exit(1));`;
  const result = spawnSync(process.execPath, ['-e', probe, REDIS_URL], { timeout: 5000, cwd: __dirname });
  return result.status === 0;
})();

export const RUN_REDIS_TESTS = REDIS_REACHABLE || REDIS_REQUIRED;

/** A key prefix no other run (or concurrent test file) uses: the demo's `REDIS_PREFIX`. */
export function uniquePrefix(label: string): string {
  return `ballast-demo-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** A client for the test's own checks; fails fast with a clear message when Redis does not answer. */
export async function requireRedis(): Promise<Redis> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return client;
  } catch (e) {
    client.disconnect();
    throw new Error(`Redis at ${REDIS_URL} is required (CI=true) but unreachable: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** Keys under `prefix`, by SCAN (never KEYS, so a shared Redis is not blocked). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found.sort();
}

/** Deletes the run's keys and disconnects. */
export async function cleanUp(client: Redis | undefined, prefix: string): Promise<void> {
  if (client === undefined) return;
  try {
    const keys = await keysUnder(client, prefix);
    if (keys.length > 0) await client.del(...keys);
  } finally {
    client.disconnect();
  }
}

/** The one test shown when Redis is unreachable outside CI, so the file still reports why. */
export function reportRedisUnreachable(): void {
  it(`needs Redis at ${REDIS_URL} (unreachable; CI=true makes this a failure)`, () => {
    expect(REDIS_REACHABLE || REDIS_REQUIRED).toBe(false);
  });
}
