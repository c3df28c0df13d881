import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * Where the tests' Redis listens, and whether its tests run: the same rule as packages/redis's tests (REDIS_URL,
 * else the project machines' local Redis; required when CI=true, where an unreachable Redis fails the tests).
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

/** Host and port of {@link REDIS_URL}, as Nest's Redis transport takes them. */
export function redisHostPort(): { host: string; port: number } {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
}

/** A channel prefix no other run (or concurrent test file) uses. */
export function uniqueChannelPrefix(label: string): string {
  return `ballast-nest-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Fails fast with a clear message when Redis does not answer (in CI, where the Redis tests are required). */
export async function requireRedis(): Promise<void> {
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
  } catch (e) {
    throw new Error(`Redis at ${REDIS_URL} is required (CI=true) but unreachable: ${(e as Error).message}`, {
      cause: e,
    });
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
