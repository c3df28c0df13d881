import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/*
 * Where the tests' Redis listens and whether the Redis tests run — one rule for every project's tests (packages/redis,
 * packages/nestjs, apps/demo): REDIS_URL, else the project machines' local Redis; run when it answers, and required
 * when CI=true, where an unreachable Redis fails them instead of leaving them out. Each project's
 * `src/__tests__/redis-env` re-exports this and adds its own helpers.
 */

export const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
/** In CI the Redis tests are required: an unreachable Redis fails them instead of leaving them out. */
export const REDIS_REQUIRED = process.env['CI'] === 'true';

/**
 * Whether Redis answers PING, decided synchronously at load (Jest collects tests synchronously) by a tiny child
 * process, so a developer without Redis still gets a green run of everything else.
 */
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

/** Run the Redis suites when Redis answers, or always in CI (where a missing Redis must fail them). */
export const RUN_REDIS_TESTS = REDIS_REACHABLE || REDIS_REQUIRED;

/** A name (key prefix, channel prefix) no other run or concurrent test file uses. */
export function uniqueName(project: string, label: string): string {
  return `ballast-${project}-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

function unreachable(e: unknown): Error {
  return new Error(`Redis at ${REDIS_URL} is required (CI=true) but unreachable: ${(e as Error).message}`, {
    cause: e,
  });
}

/** Fails fast with a clear message when `client`'s Redis does not answer within 3 s. */
export async function requireRedis(client: Redis): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no reply within 3 s')), 3000);
      }),
    ]);
  } catch (e) {
    throw unreachable(e);
  } finally {
    clearTimeout(timer);
  }
}

/** A connected client that gives up at once (no reconnecting), or the clear message when Redis does not answer. */
export async function connectRequired(): Promise<Redis> {
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
    throw unreachable(e);
  }
}

/** Keys matching a glob, by SCAN (never KEYS, so a shared Redis is not blocked). */
export async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(client: Redis, prefix: string): Promise<number> {
  const keys = await scanKeys(client, `${prefix}:*`);
  return keys.length === 0 ? 0 : client.del(...keys);
}

/**
 * Deletes the run's keys (bounded, so an unreachable Redis cannot hang the run) and always disconnects the clients:
 * a client left reconnecting would keep Jest from exiting.
 */
export async function cleanUp(prefix: string, clients: ReadonlyArray<Redis | undefined>): Promise<void> {
  const [first] = clients;
  try {
    if (first !== undefined) {
      await Promise.race([
        deleteKeys(first, prefix).catch(() => 0),
        new Promise((resolve) => setTimeout(resolve, 5000).unref()),
      ]);
    }
  } finally {
    for (const c of clients) c?.disconnect();
  }
}

/** Registers the one test shown when Redis is unreachable outside CI, so the file still reports why. */
export function reportRedisUnreachable(): void {
  it(`needs Redis at ${REDIS_URL} (unreachable; CI=true makes this a failure)`, () => {
    expect(REDIS_REACHABLE || REDIS_REQUIRED).toBe(false);
  });
}
